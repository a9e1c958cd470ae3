// SPDX-License-Identifier: BSD-3-Clause
// What the N-body stages share: the body-body interaction (listing 14.1), one __host__ __device__
// template that the host references (float64 and float32), the CPU scalar path and every GPU
// kernel call; and the plumbing of the register-blocked stages (the blockings they are compiled
// for, the column split). The register-blocked kernel itself is a lesson:
// lesson_register_blocked.cuh, taught by stage 07 (and run by 08 and 10).
//
// This header is also read by plain C++ (the host references and the CPU stage): the CUDA-only
// parts are inside #ifdef __CUDACC__.
#pragma once

#include "nbody.h"

#ifdef __CUDACC__
#include "common/check.h"
#endif

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>

#ifdef __CUDACC__
#define NBODY_HD __host__ __device__
#else
#define NBODY_HD
#endif

namespace nbody {

// 1/sqrt(x): on the GPU one MUFU.RSQ (about 2 ulp), on the host the exact quotient (listing 14.2
// divides by sqrtf), in double for the float64 reference.
// Why PTX and not rsqrtf: without -ftz=true, rsqrtf compiles to MUFU.RSQ wrapped in a denormal
// guard (FSETP on |x| < 2^-126, a predicated FMUL by 2^24 before and one by 2^12 after): three
// more issue slots per interaction, measured 17 instead of 13 on sm_90. x here is a squared
// distance plus softening^2 > 0, never denormal for any softening above 1e-19, so the
// flush-to-zero form rsqrt.approx.ftz.f32 (MUFU.RSQ alone) is exact enough and 25% cheaper.
NBODY_HD inline float reciprocal_sqrt(float x) {
#ifdef __CUDA_ARCH__
  float r;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
#else
  return 1.0f / std::sqrt(x);
#endif
}
NBODY_HD inline double reciprocal_sqrt(double x) {
#ifdef __CUDA_ARCH__
  return rsqrt(x);
#else
  return 1.0 / std::sqrt(x);
#endif
}

// Listing 14.1: adds to (fx, fy, fz) the pull of body 1 (x1, y1, z1, mass1) on body 0 at
// (x0, y0, z0). 3 FADD, 3 FFMA for the squared distance, 1 MUFU.RSQ, 3 FMUL for mass / r^3 and
// 3 FFMA for the sums: 12 FP32-pipe instructions. The squared distance adds the softening first,
// dz^2 + softening^2, so that it folds into the first FFMA: written left to right, as
// dx^2 + dy^2 + dz^2 + softening^2, C++ requires a separate FADD at the end (13 instructions).
template <class T>
NBODY_HD inline void body_body_interaction(T &fx, T &fy, T &fz, T x0, T y0, T z0, T x1, T y1, T z1,
                                           T mass1, T softening2) {
  const T dx = x1 - x0, dy = y1 - y0, dz = z1 - z0;
  const T d2 = dx * dx + (dy * dy + (dz * dz + softening2));
  const T inv = reciprocal_sqrt(d2);
  const T s = mass1 * inv * inv * inv;
  fx += dx * s;
  fy += dy * s;
  fz += dz * s;
}

inline void require(const config &cfg) {
  if (!supports_threads(cfg.threads))
    throw std::invalid_argument(
        "N-body stages need 32..1024 threads per block, a multiple of 32, not " +
        std::to_string(cfg.threads));
}

// Calls f(std::integral_constant<int, U>{}) for U == u in 1, 2, 4, ..., 32 (the unroll sweeps).
template <int U = 1, class F>
void dispatch_unroll(int u, F &&f) {
  if constexpr (U <= 32) {
    if (u == U) return f(std::integral_constant<int, U>{});
    dispatch_unroll<U * 2>(u, f);
  } else {
    throw std::invalid_argument("no kernel compiled for unroll factor " + std::to_string(u));
  }
}

NBODY_HD inline std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

#ifdef __CUDACC__

// Body j, or a body of zero mass at the origin past the end: it adds exactly 0 to every sum
// (dx * 0), so the tail of the last tile needs no test in the inner loop.
__device__ __forceinline__ float4 body_or_nothing(const float4 *body, std::size_t j,
                                                  std::size_t n) {
  return j < n ? body[j] : make_float4(0.f, 0.f, 0.f, 0.f);
}

// The rows per thread, threads per block and tile-loop unroll factors stages 07 and 08 are compiled
// for: f(R, B, U) as integral constants. unroll: 8, 16 or 32 (anything else: 8).
template <class F>
void dispatch_blocking(int rows_per_thread, int threads, int unroll, F &&f) {
  auto with_rb = [&](auto r, auto b) {
    switch (unroll) {
      case 16: return f(r, b, std::integral_constant<int, 16>{});
      case 32: return f(r, b, std::integral_constant<int, 32>{});
      default: return f(r, b, std::integral_constant<int, 8>{});
    }
  };
  auto with_r = [&](auto r) {
    switch (threads) {
      case 128: return with_rb(r, std::integral_constant<int, 128>{});
      case 256: return with_rb(r, std::integral_constant<int, 256>{});
    }
    throw std::invalid_argument(
        "stages 07 and 08 are compiled for 128 or 256 threads per block, not " +
        std::to_string(threads));
  };
  switch (rows_per_thread) {
    case 1: return with_r(std::integral_constant<int, 1>{});
    case 2: return with_r(std::integral_constant<int, 2>{});
    case 4: return with_r(std::integral_constant<int, 4>{});
    case 8: return with_r(std::integral_constant<int, 8>{});
  }
  throw std::invalid_argument(
      "stages 07 and 08 are compiled for 1, 2, 4 or 8 rows per thread, not " +
      std::to_string(rows_per_thread));
}

// How many column slices to cut the interaction matrix into (whole tiles each; the blocks of one
// row block add their slices' sums with atomicAdd). Two reasons to cut, one rule for both: about
// 128 blocks per SM. Too few row blocks leave SMs idle (n = 16K at R * B = 1024 rows a block is 16
// blocks for 132 SMs), and a grid of a few waves of long blocks leaves its last, partial wave on
// few SMs for a large share of the call (at n = 128K, R 4 x B 256, 8 blocks per SM made 2.2 waves
// and cost 3%: notes.md, "Why stage 08 stops"). A slice is never shorter than one tile.
inline int column_split(std::size_t n, std::size_t row_blocks, int tile) {
  int device = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const std::size_t want = std::size_t(sms) * 128;
  std::size_t split = row_blocks >= want ? 1 : ceil_div(want, row_blocks);
  const std::size_t most = ceil_div(n, std::size_t(tile));
  if (split > most) split = most;
  return split < 1 ? 1 : int(split);
}

#endif  // __CUDACC__

}  // namespace nbody
