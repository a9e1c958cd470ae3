// SPDX-License-Identifier: BSD-3-Clause
// What the N-body stages share: the body-body interaction (listing 14.1), one __host__ __device__
// template that the host references (float64 and float32), the CPU scalar path and every GPU
// kernel call; and the register-blocked tile kernel that stage 07 tunes and stage 09 runs on every
// GPU (written once here because both use it).
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
NBODY_HD inline void body_body_interaction(T &fx, T &fy, T &fz, T x0, T y0, T z0, T x1, T y1, T z1, T mass1,
                                           T softening2) {
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
    throw std::invalid_argument("N-body stages need 32..1024 threads per block, a multiple of 32, not " +
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
__device__ __forceinline__ float4 body_or_nothing(const float4 *body, std::size_t j, std::size_t n) {
  return j < n ? body[j] : make_float4(0.f, 0.f, 0.f, 0.f);
}

// How the register-blocked kernel stages a tile of bodies in shared memory and computes one
// interaction from it: the kernel below is written once for any such form. This one is listing
// 14.1 as it stands (the tile holds the bodies as they are, and body_body_interaction does the
// rest: 12 FP32-pipe instructions). Stage 07 brings its own form (mass-scaled coordinates, 11);
// stage 09 runs this one.
struct listing_14_1_form {
  // Body i's pull on itself is exactly 0 (dx = x - x = 0): no tile needs the j == i mask.
  static constexpr bool self_term_exact_zero = true;
  template <int B>
  struct tile {
    float4 body[B];
  };
  using source = float4;
  // Thread k of the block puts body b (zero mass past N) in slot k.
  template <int B>
  __device__ static void put(tile<B> &t, int k, float4 b, float /*softening2*/) {
    t.body[k] = b;
  }
  // The four sources in slots j .. j + 3 (j a multiple of 4).
  template <int B>
  __device__ static void get4(const tile<B> &t, int j, source (&s)[4]) {
#pragma unroll
    for (int g = 0; g < 4; ++g) s[g] = t.body[j + g];
  }
  __device__ static void interact(float &fx, float &fy, float &fz, float x, float y, float z, const source &b,
                                  float softening2, bool /*self: never needed*/) {
    body_body_interaction(fx, fy, fz, x, y, z, b.x, b.y, b.z, b.w, softening2);
  }
};

// The interactions of R rows with one tile of B sources. Masked (only for the tiles that hold
// some of the block's own rows, and only for a form whose self term is not exactly 0): the
// source j == self[r] (the row itself) adds nothing.
template <bool Masked, class Form, int R, int B, int U>
__device__ __forceinline__ void tile_interactions(const typename Form::template tile<B> &tile, float (&fx)[R],
                                                  float (&fy)[R], float (&fz)[R], const float (&px)[R],
                                                  const float (&py)[R], const float (&pz)[R], const int (&self)[R],
                                                  float softening2) {
#pragma unroll(U / 4)
  for (int j = 0; j < B; j += 4) {
    typename Form::source s[4];
    Form::get4(tile, j, s);
#pragma unroll
    for (int g = 0; g < 4; ++g) {
#pragma unroll
      for (int r = 0; r < R; ++r)
        Form::interact(fx[r], fy[r], fz[r], px[r], py[r], pz[r], s[g], softening2, Masked && j + g == self[r]);
    }
  }
}

// The register-blocked kernel (stage 07, and every GPU of stage 09). A block of B threads owns
// R * B rows starting at row0 + blockIdx.x * R * B (thread t: rows t, t + B, ...; each thread keeps
// R bodies and R sums in registers) and the columns [blockIdx.y * cols, ... + cols) of the
// interaction matrix. It walks those columns in tiles of B bodies staged in shared memory by
// Form; every source read from shared memory (a broadcast LDS.128) feeds R interactions, so the
// FP32 pipe, not the load/store unit, sets the pace. With gridDim.y > 1 several blocks add into
// the same rows (atomicAdd; the caller zeroes `force`); with gridDim.y == 1 the sums are stored.
template <class Form, int R, int B, int U>
__global__ void __launch_bounds__(B) register_blocked_forces(float4 *__restrict__ force,
                                                             const float4 *__restrict__ body, std::size_t n,
                                                             std::size_t row0, std::size_t rows,
                                                             std::size_t cols, float softening2) {
  static_assert(B % 4 == 0 && U % 4 == 0, "the tile is read four sources at a time");
  __shared__ typename Form::template tile<B> tile;
  const std::size_t block_first = row0 + std::size_t(blockIdx.x) * R * B;  // the block's rows: R * B from here
  const std::size_t first = block_first + threadIdx.x;
  const std::size_t row_end = row0 + rows;
  float px[R], py[R], pz[R], fx[R], fy[R], fz[R];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const std::size_t i = first + std::size_t(r) * B;
    const float4 b = i < row_end ? body[i] : make_float4(0.f, 0.f, 0.f, 0.f);
    px[r] = b.x, py[r] = b.y, pz[r] = b.z;
    fx[r] = fy[r] = fz[r] = 0.f;
  }
  const std::size_t c_begin = std::size_t(blockIdx.y) * cols;
  const std::size_t c_end = c_begin + cols < n ? c_begin + cols : n;
  for (std::size_t t = c_begin; t < c_end; t += B) {
    __syncthreads();  // the previous tile is no longer read
    Form::put(tile, threadIdx.x, body_or_nothing(body, t + threadIdx.x, c_end), softening2);
    __syncthreads();
    // Does the tile hold any of the block's rows? The same answer for the whole block (R of the
    // n / B tiles of a row block): the mask costs nothing elsewhere.
    if (!Form::self_term_exact_zero && t < block_first + std::size_t(R) * B && block_first < t + B) {
      int self[R];  // where row r sits in this tile (anywhere outside [0, B) when it does not)
#pragma unroll
      for (int r = 0; r < R; ++r) self[r] = int(std::ptrdiff_t(first + std::size_t(r) * B) - std::ptrdiff_t(t));
      tile_interactions<true, Form, R, B, U>(tile, fx, fy, fz, px, py, pz, self, softening2);
    } else {
      const int none[R] = {};
      tile_interactions<false, Form, R, B, U>(tile, fx, fy, fz, px, py, pz, none, softening2);
    }
  }
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const std::size_t i = first + std::size_t(r) * B;
    if (i >= row_end) continue;
    if (gridDim.y == 1) {
      force[i - row0] = make_float4(fx[r], fy[r], fz[r], 0.f);
    } else {
      atomicAdd(&force[i - row0].x, fx[r]);
      atomicAdd(&force[i - row0].y, fy[r]);
      atomicAdd(&force[i - row0].z, fz[r]);
    }
  }
}

// Launches register_blocked_forces<Form, R, B, U> over rows [row0, row0 + rows) of force (indexed
// from row0) against all n bodies, the columns split into `split` slices of whole tiles.
template <class Form, int R, int B, int U>
void launch_register_blocked(float4 *force, const float4 *body, std::size_t n, std::size_t row0, std::size_t rows,
                             int split, float softening2, cudaStream_t stream) {
  if (rows == 0 || n == 0) return;
  const std::size_t cols = ceil_div(ceil_div(n, std::size_t(split < 1 ? 1 : split)), B) * B;
  const dim3 grid(unsigned(ceil_div(rows, std::size_t(R) * B)), unsigned(ceil_div(n, cols)));
  if (grid.y > 1) CUDA_CHECK(cudaMemsetAsync(force, 0, rows * sizeof(float4), stream));
  register_blocked_forces<Form, R, B, U><<<grid, B, 0, stream>>>(force, body, n, row0, rows, cols, softening2);
  CUDA_CHECK_LAUNCH();
}

// The rows per thread, threads per block and tile-loop unroll factors stage 07 is compiled for:
// f(R, B, U) as integral constants. unroll: 8, 16 or 32 (anything else: 8).
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
    throw std::invalid_argument("stage 07 is compiled for 128 or 256 threads per block, not " + std::to_string(threads));
  };
  switch (rows_per_thread) {
    case 1: return with_r(std::integral_constant<int, 1>{});
    case 2: return with_r(std::integral_constant<int, 2>{});
    case 4: return with_r(std::integral_constant<int, 4>{});
    case 8: return with_r(std::integral_constant<int, 8>{});
  }
  throw std::invalid_argument("stage 07 is compiled for 1, 2, 4 or 8 rows per thread, not " + std::to_string(rows_per_thread));
}

// How many column slices give every SM several blocks to work on at once (for n = 128K and
// R * B = 512 rows per block, 256 row blocks alone would leave a 132-SM GPU half idle in the
// second wave): about 8 blocks per SM, never slices shorter than 8 tiles.
inline int column_split(std::size_t n, std::size_t row_blocks, int tile) {
  int device = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const std::size_t want = std::size_t(sms) * 8;
  std::size_t split = row_blocks >= want ? 1 : ceil_div(want, row_blocks);
  const std::size_t most = ceil_div(n, std::size_t(tile) * 8);
  if (split > most) split = most;
  return split < 1 ? 1 : int(split);
}

#endif  // __CUDACC__

}  // namespace nbody
