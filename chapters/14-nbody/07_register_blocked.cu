// SPDX-License-Identifier: BSD-3-Clause
// Stage 07: register blocking. Beyond the book: the shared-memory tiles of 14.3 (stage 03), with
// R bodies per thread; the column split for small N is the idea 14.1.1 cites from Harris et al.
//
// Your task is in the lesson header lesson_register_blocked.cuh (its regions; stages 08 and 10 run
// your kernel too): let each thread keep R bodies and their sums in registers, so that one body
// read from the shared tile feeds R interactions; unroll the tile loop U times; and split the
// columns over several blocks whose partial sums meet in the forces (the split is chosen for you:
// enough blocks to fill the GPU when N / (R B) row blocks cannot, and short ones at large N). This
// file picks R, B, U and the split and launches your kernel. Watch for: the shared loads per
// interaction in the SASS against stage 03's (make sass-diff A=14-nbody/03_shared_tiled
// B=exercise/14-nbody/07_register_blocked); the rate against the FP32-pipe ceiling (FMA rate / 12)
// in the bench's blocking table; and racecheck, which sees a tile overwritten while another warp
// still reads it.
#include "lesson_register_blocked.cuh"

#include "common/check.h"

namespace {

constexpr int default_rows_per_thread = 4;
constexpr int default_threads = 128;

void forces(float4 *d_force, const float4 *d_body, std::size_t n, float softening2,
            const nbody::config &cfg, cudaStream_t stream) {
  nbody::require(cfg);
  const int R = cfg.rows_per_thread ? cfg.rows_per_thread : default_rows_per_thread;
  // The stage's own block size unless asked for one of those it is compiled for (128 or 256).
  const int threads = (cfg.threads == 128 || cfg.threads == 256) ? cfg.threads : default_threads;
  nbody::dispatch_blocking(R, threads, cfg.unroll, [&](auto r, auto b, auto u) {
    constexpr int RR = decltype(r)::value, B = decltype(b)::value, U = decltype(u)::value;
    using Form = nbody::listing_14_1_form;
    const std::size_t row_blocks = nbody::ceil_div(n, std::size_t(RR) * B);
    const int split = n ? nbody::column_split(n, row_blocks, B) : 1;
    nbody::launch_register_blocked<Form, RR, B, U>(d_force, d_body, n, 0, n, split, softening2,
                                                   stream);
  });
}

}  // namespace

NBODY_STAGE("register-blocked tiles (beyond the book)", forces, nullptr, false, true);
