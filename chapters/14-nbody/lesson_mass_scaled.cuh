// SPDX-License-Identifier: BSD-3-Clause
// Lesson header of stage 08_mass_scaled (beyond the book): the interaction form of stage 07's
// kernel in mass-scaled coordinates, 11 FP32-pipe instructions per interaction. Stage 08 teaches
// it; stage 11_ranks runs it on every rank, so once you have written it here, stage 11 runs your
// code (complete in solutions/14-nbody, the regions stubbed in chapters/14-nbody).
// The form is in an unnamed namespace, as the stages' own code is: each stage object that
// includes it gets its own copy of the kernel, so the programs that link several stages (the
// tests of stage 11 link stage 08's reference) never merge two versions of it.
#pragma once

#include "lesson_register_blocked.cuh"

#include <cstddef>

namespace {

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
// rounding error of a x, about 2^-24 a |x|, and the softened r^-3 of the self term is (m /
// e^2)^(3/2): a spurious pull of about 2^-24 |x| m / e^3 (0.02 for m = 1, x ~ 1, e = 0.01; 10^4 for
// m = 10^6). So the tiles that hold the block's own rows (R of every n / B tiles, under 1% of them
// at n = 128K) run a second, masked copy of the tile loop; the others run the loop without a mask.
struct mass_scaled_form {
  template <int B>
  struct tile {
    float4 scaled[B];           // (a x, a y, a z, -a)
    alignas(16) float soft[B];  // a^2 e^2, read four at a time with one LDS.128
  };
  struct source {
    float ax, ay, az, minus_a, soft;
  };
  template <int B>
  __device__ static void put(tile<B> &t, int k, float4 b, float softening2) {
    // EXERCISE BEGIN: store body b in slot k in the scaled form above, a body of zero mass adding
    // exactly 0 without dividing by 0.
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
  __device__ static void interact(float &fx, float &fy, float &fz, float x, float y, float z,
                                  const source &b, float /*softening2: in b.soft*/, bool self) {
    // EXERCISE BEGIN: add the scaled source b's pull on (x, y, z) to (fx, fy, fz) in 9 FFMA, 2 FMUL
    // and one reciprocal square root, nothing when self.
    COURSE_TODO();
    // EXERCISE END
  }
  template <int R, int B, int U>
  __device__ static void tile_pass(const tile<B> &t, float (&fx)[R], float (&fy)[R], float (&fz)[R],
                                   const float (&px)[R], const float (&py)[R], const float (&pz)[R],
                                   std::ptrdiff_t block_at, float softening2) {
    // EXERCISE BEGIN: this thread's R rows against the tile, with the j == i mask only in the tiles
    // that hold any of the block's rows.
    COURSE_TODO();
    // EXERCISE END
  }
};

}  // namespace
