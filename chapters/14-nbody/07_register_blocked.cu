// SPDX-License-Identifier: BSD-3-Clause
// Stage 07: beyond the book: the fastest force kernel we could write, against the FP32-pipe
// ceiling.
//
// Changes from stage 03: (1) register blocking: each thread keeps R bodies (rows) and their sums
// in registers, so every body read from shared memory (one broadcast LDS.128) feeds R
// interactions; (2) the tile loop is unrolled U times (a template argument), so the loop's
// compare and branch are paid once per U x R interactions (config::unroll: 8, 16 or 32;
// anything else: 8); (3) when there are too few row blocks to fill every SM, the
// columns are split into slices computed by different blocks, which add their sums with atomicAdd;
// (4) rsqrtf, one MUFU.RSQ (as every GPU stage). The kernel, nbody::register_blocked_forces, lives
// in nbody_common.cuh because stage 09 runs it on every GPU.
// The ceiling: an interaction costs 12 FP32-pipe instructions (3 FADD, 3 FFMA/FMUL, 3 FMUL,
// 3 FFMA) and one MUFU.RSQ; the FP32 pipe issues one warp instruction per clock per SM quarter,
// and everything else (MUFU, LDS, loop) competes for the same issue slots. The bench reports the
// rate as % of (measured FMA rate / 12).
// What to look for: in the timing, the sweep over R and the block size (the bench's tuning
// table); in the SASS of the inner loop, per interaction: FADD x3, FFMA/FMUL x9, MUFU.RSQ x1 and
// only 1/R LDS.128 (make sass-count STAGE=14-nbody/07_register_blocked).
#include "nbody_common.cuh"

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
    // EXERCISE BEGIN: count the row blocks (R * B rows each), pick the column split with
    // nbody::column_split so every SM has several blocks, and launch
    // nbody::launch_register_blocked<RR, B, U> over all n rows.
    COURSE_TODO();
    // EXERCISE END
  });
}

}  // namespace

NBODY_STAGE(COURSE_THIS_STAGE("register-blocked tiles (beyond the book)"), forces, nullptr, false, true);
