// SPDX-License-Identifier: BSD-3-Clause
// Stage 07: register blocking. Beyond the book: the shared-memory tiles of 14.3 (stage 03), with
// R bodies per thread; the column split for small N is the idea 14.1.1 cites from Harris et al.
//
// Changes from stage 03: (1) register blocking: each thread keeps R bodies (rows) and their sums
// in registers, so every body read from shared memory (one broadcast LDS.128) feeds R
// interactions instead of one; (2) the tile loop is unrolled U times (a template argument), so the
// loop's compare and branch are paid once per U x R interactions (config::unroll: 8, 16 or 32;
// anything else: 8); (3) the columns are split into slices computed by different blocks, which add
// their sums with atomicAdd: when there are too few row blocks to fill every SM (N / (R B)
// blocks), and at large N so that the blocks are short and the last, partial wave of them is a
// small part of the call (nbody::column_split: about 128 blocks per SM). The book reports Harris
// et al. splitting each row over several threads for small N (partial sums reduced in shared
// memory, a gain for N <= 4096); here the partial sums come from different blocks and meet in
// global memory. The interaction is still listing 14.1's (12 FP32-pipe instructions); stage 08
// changes only that. The kernel is in the lesson header lesson_register_blocked.cuh (stages 08 and 10 run
// it too); this file picks the blocking and the split.
// The ceiling: the FP32 pipe issues one warp instruction per clock per SM quarter, and everything
// else (MUFU, LDS, loop) competes for the same issue slots; the bench reports % of (measured FMA
// rate / 12).
// What to look for: in the timing, the blocking table (R x B x U) and the progression's row
// against stage 03's (the broadcast LDS.128 was already cheap next to 12 FP32 instructions, so
// saving most of them gains little); in the SASS of the inner loop (R = 4, B = 256, U = 16, the
// committed capture): 192 FADD, 192 FMUL, 384 FFMA, 64 MUFU.RSQ and only 16 LDS.128 per 64
// interactions, and 5 instructions of loop control (make sass-count
// STAGE=14-nbody/07_register_blocked); in the profile, the FMA pipe's use against stage 03's.
#include "lesson_register_blocked.cuh"

#include "common/check.h"

namespace {

constexpr int default_rows_per_thread = 4;
constexpr int default_threads = 128;

void forces(float4 *d_force, const float4 *d_body, std::size_t n, float softening2, const nbody::config &cfg,
            cudaStream_t stream) {
  nbody::require(cfg);
  const int R = cfg.rows_per_thread ? cfg.rows_per_thread : default_rows_per_thread;
  // The stage's own block size unless asked for one of those it is compiled for (128 or 256).
  const int threads = (cfg.threads == 128 || cfg.threads == 256) ? cfg.threads : default_threads;
  nbody::dispatch_blocking(R, threads, cfg.unroll, [&](auto r, auto b, auto u) {
    constexpr int RR = decltype(r)::value, B = decltype(b)::value, U = decltype(u)::value;
    using Form = nbody::listing_14_1_form;
    const std::size_t row_blocks = nbody::ceil_div(n, std::size_t(RR) * B);
    const int split = n ? nbody::column_split(n, row_blocks, B) : 1;
    nbody::launch_register_blocked<Form, RR, B, U>(d_force, d_body, n, 0, n, split, softening2, stream);
  });
}

}  // namespace

NBODY_STAGE(COURSE_THIS_STAGE("register-blocked tiles (beyond the book)"), forces, nullptr, false, true);
