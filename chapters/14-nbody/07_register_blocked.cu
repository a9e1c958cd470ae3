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
// (4) mass-scaled coordinates: the tile holds each body as a(x, y, z) with a = m^(-1/2), so that
// one interaction costs 11 FP32-pipe instructions instead of listing 14.1's 12 (below). The
// kernel, nbody::register_blocked_forces, lives in nbody_common.cuh because stage 09 runs it on
// every GPU (with listing 14.1's form); this file brings the form and the launch.
// The ceiling: the FP32 pipe issues one warp instruction per clock per SM quarter, and everything
// else (MUFU, LDS, loop) competes for the same issue slots; the bench reports the rate as % of
// (measured FMA rate / 12), listing 14.1's count, so 100% is not a hard limit for this form.
// What to look for: in the timing, the blocking table (R x B x U, both forms side by side); in
// the SASS of the inner loop, per interaction: FFMA x9, FMUL x2, MUFU.RSQ x1 and no FADD, and 5
// LDS.128 per four sources (4R interactions); the loop twice, the copy for the diagonal tiles with
// an FSEL per interaction (make sass-count STAGE=14-nbody/07_register_blocked).
#include "nbody_common.cuh"

#include "common/check.h"

namespace {

constexpr int default_rows_per_thread = 4;
constexpr int default_threads = 128;

// Mass-scaled coordinates. Listing 14.1 computes m (x_j - x_i) / (d^2 + e^2)^(3/2) as 3 FADD
// (the differences), 3 FFMA (d^2 + e^2), MUFU.RSQ, 3 FMUL (m r^-3) and 3 FFMA (the sums). Scale
// body j by a = m_j^(-1/2): with d' = a (x_j - x_i), (d'^2 + a^2 e^2)^(-1/2) = r^-1 / a, so
// d' (d'^2 + a^2 e^2)^(-3/2) = m_j (x_j - x_i) r^-3: the mass is gone from the inner loop. The
// tile stores (a x_j, a y_j, a z_j, -a) and e^2 / m_j = a^2 e^2, once per body per tile; then
// d' = fma(-a, x_i, a x_j) is one FFMA (the FADD it replaces), and r^-3 needs 2 FMUL, not 3:
// 9 FFMA + 2 FMUL per interaction. Rounding: a x_j is one more rounding of a coordinate (half an
// ulp of x_j), the same size as the error in the position itself. A body of zero mass becomes
// a = 0 with a^2 e^2 = 1: d' = 0, so it adds exactly 0 (as the zero-mass bodies past N must).
// Masses must be >= 0 (a negative mass gives NaN forces, not a silent wrong answer).
// The price: body i's pull on itself is no longer exactly 0. d' = fma(-a, x, round(a x)) is the
// rounding error of a x, about 2^-24 a |x|, and the softened r^-3 of the self term is (m / e^2)^(3/2):
// a spurious pull of about 2^-24 |x| m / e^3 (0.02 for m = 1, x ~ 1, e = 0.01; the tests caught
// it). So the kernel masks j == i, with a select, in the tiles that hold the block's own rows
// (self_term_exact_zero = false): R of every n / B tiles, under 1% of them at n = 128K.
struct mass_scaled_form {
  static constexpr bool self_term_exact_zero = false;
  template <int B>
  struct tile {
    float4 scaled[B];             // (a x, a y, a z, -a)
    alignas(16) float soft[B];    // a^2 e^2, read four at a time with one LDS.128
  };
  struct source {
    float ax, ay, az, minus_a, soft;
  };
  template <int B>
  __device__ static void put(tile<B> &t, int k, float4 b, float softening2) {
    // EXERCISE BEGIN: store body b (x, y, z, mass m >= 0) in slot k: t.scaled[k] = (a x, a y, a z, -a)
    // with a = m^(-1/2) (1.f / sqrtf: exact to an ulp; once per body per tile, so the cost does
    // not matter), t.soft[k] = softening2 / m; for m == 0: a = 0 and soft = 1 (adds exactly 0).
    COURSE_TODO();
    // EXERCISE END
  }
  template <int B>
  __device__ static void get4(const tile<B> &t, int j, source (&s)[4]) {
    const float4 soft = reinterpret_cast<const float4 *>(t.soft)[j / 4];
    const float soft_of[4] = {soft.x, soft.y, soft.z, soft.w};
#pragma unroll
    for (int g = 0; g < 4; ++g) {
      const float4 b = t.scaled[j + g];
      s[g] = source{b.x, b.y, b.z, b.w, soft_of[g]};
    }
  }
  __device__ static void interact(float &fx, float &fy, float &fz, float x, float y, float z, const source &b,
                                  float /*softening2: in b.soft*/, bool self) {
    // EXERCISE BEGIN: add m (r_j - r_i) / (d^2 + e^2)^(3/2) to (fx, fy, fz) from the scaled source b
    // and this thread's body (x, y, z): 3 fmaf for d', 3 for d'^2 + b.soft (the softening first,
    // as in body_body_interaction), nbody::reciprocal_sqrt, 2 multiplications (r^-3 = 0 when
    // self: the body itself), 3 fmaf.
    COURSE_TODO();
    // EXERCISE END
  }
};

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
    // nbody::launch_register_blocked<Form, RR, B, U> over all n rows, Form being
    // mass_scaled_form, or nbody::listing_14_1_form when cfg.form asks for it.
    COURSE_TODO();
    // EXERCISE END
  });
}

}  // namespace

NBODY_STAGE(COURSE_THIS_STAGE("register-blocked tiles, mass-scaled coordinates (beyond the book)"), forces, nullptr,
            false, true);
