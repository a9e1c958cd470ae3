// SPDX-License-Identifier: BSD-3-Clause
// Stage 07: register blocking. Beyond the book: 14.3's shared-memory tiles (stage 03) with R bodies
// per thread; the column split for small N is the idea 14.1.1 cites from Harris et al.
//
// Changes from stage 03: each thread keeps R rows and their sums in registers, so each body read
// from shared memory feeds R interactions; the tile loop is unrolled U times; the columns are split
// over blocks that meet by atomicAdd when rows alone do not fill the GPU. The kernel is in
// lesson_register_blocked.cuh (stages 08 and 10 run it too); this file picks the blocking.
// What to look for: in the timing, the blocking table (R x B x U) and the row against stage 03's;
// in the SASS of the inner loop (`make sass-count STAGE=14-nbody/07_register_blocked`), 16 LDS.128
// per 64 interactions and 5 instructions of loop control; in the profile, the FMA pipe's use.
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
