// SPDX-License-Identifier: BSD-3-Clause
// Lab (not a stage: no exercise): stage 08's kernel with its reciprocal square roots placed
// otherwise, some on the FMA pipe, some spread through the loop by hand. lab_rsqrt_pipes.cu says
// what each variant does and what to look for; the benchmark times them beside stage 08 in one
// run, test_lab_rsqrt_pipes.cpp tests them, capture_lab_rsqrt_pipes.py profiles them.
#pragma once

#include "nbody_common.cuh"

#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace nbody {
namespace lab {

// The variants, each a template instance of one form (lab_rsqrt_pipes.cu). Every one computes the
// forces of every stage (nbody.h) in stage 08's mass-scaled coordinates, at R = 4 rows per thread,
// B = 256 threads, U = 16 sources per loop trip, with stage 08's column split.
enum class rsqrt_variant {
  stage08_copy,    // stage 08's interactions in the lab's loop: the control (one MUFU.RSQ each)
  fma_1_16,        // 1 interaction in 16 takes r^-3 on the FMA pipe, the others a MUFU.RSQ
  fma_1_8,         // 1 in 8
  fma_1_4,         // 1 in 4
  fma_1_2,         // 1 in 2
  spread,          // every interaction a MUFU.RSQ, written software-pipelined (PTX order)
  spread_fenced,   // the same, a __syncwarp() after each step
  fma_1_8_spread,  // fma_1_8 in the software-pipelined order
  chained,        // every root a MUFU.RSQ whose input waits for the previous one's result (+1 FFMA)
  chained_pairs,  // the same for every second root (+1/2 FFMA): MUFU.RSQ two by two
  fma_1_16_chained,  // fma_1_16 with the MUFU.RSQ chained
};
inline constexpr rsqrt_variant all_rsqrt_variants[] = {
    rsqrt_variant::stage08_copy,  rsqrt_variant::fma_1_16,       rsqrt_variant::fma_1_8,
    rsqrt_variant::fma_1_4,       rsqrt_variant::fma_1_2,        rsqrt_variant::spread,
    rsqrt_variant::spread_fenced, rsqrt_variant::fma_1_8_spread, rsqrt_variant::chained,
    rsqrt_variant::chained_pairs};
const char *name(rsqrt_variant v);
// The share of interactions whose r^-3 the variant computes on the FMA pipe (0: all MUFU.RSQ).
double fma_pipe_share(rsqrt_variant v);

// d_force[0, n) from d_body[0, n) (device pointers; masses >= 0, softening2 > 0), enqueued in
// `stream`, as stage 08 computes them, with the variant's reciprocal square roots.
void forces_rsqrt_variant(float4 *d_force, const float4 *d_body, std::size_t n, float softening2,
                          rsqrt_variant v, cudaStream_t stream = nullptr);

// x^(-3/2) for a normal float x > 0 on the FMA pipe, no MUFU: 2 integer instructions (the seed)
// and 8 FP32 ones (3 FMUL, 5 FFMA), where the MUFU.RSQ form takes one MUFU.RSQ and 2 FMUL.
// The seed y = 1 / sqrt(x) within 3.5% is the exponent halved and negated by integer arithmetic
// on x's bits (0x5f3759df - bits / 2, the well-known "magic constant"); with e = 1 - x y^2
// (|e| < 0.0691 for every x), x^(-3/2) = y^3 (1 - e)^(-3/2) = y^3 (1 + e q(e)), where q is the
// Taylor series of ((1 - e)^(-3/2) - 1) / e to degree 3 with its next two terms folded in by
// Chebyshev economization over |e| < 0.0691 (one step of a higher-order Newton iteration instead
// of two of the plain one: as many instructions as two plain Newton steps and a cube, 35 times more
// accurate). Its relative error, measured over every float of one period [1, 4) (the seed scales
// exactly with x's exponent, so every period is the same; test_host.cpp): at most 4.2e-7, against
// 2.9e-7 for a correctly rounded 1 / sqrt(x) cubed in float and about 7e-7 for MUFU.RSQ cubed.
// Host and device compute the same bits (FFMA and FMUL round as fmaf and * do).
NBODY_HD inline float rsqrt_cubed_fma(float x) {
  std::int32_t i;
#ifdef __CUDA_ARCH__
  i = __float_as_int(x);
#else
  std::memcpy(&i, &x, sizeof i);
#endif
  i = 0x5f3759df - (i >> 1);
  float y;
#ifdef __CUDA_ARCH__
  y = __int_as_float(i);
#else
  std::memcpy(&y, &i, sizeof y);
#endif
  const float yy = y * y, y3 = yy * y;
  const float e = fmaf(-x, yy, 1.f);
  const float q = fmaf(fmaf(fmaf(2.48194146f, e, 2.20365691f), e, 1.87496245f), e, 1.49998069f);
  return fmaf(y3 * e, q, y3);
}

}  // namespace lab
}  // namespace nbody
