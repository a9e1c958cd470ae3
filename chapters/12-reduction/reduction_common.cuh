// SPDX-License-Identifier: BSD-3-Clause
// What several reduction stages share: refusing block sizes a kernel cannot use, sizing the grid,
// the host switch that turns a block size into a template argument (12.3), the two-pass driver
// (12.2) and the templated block reduction in shared memory (12.3) that the later stages build on.
#pragma once

#include "reduction.h"

#include "common/check.h"
#include "common/launch.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace reduction {

inline const char *to_string(block_sizes s) {
  switch (s) {
    case block_sizes::powers_of_two: return "a power of two";
    case block_sizes::multiples_of_32: return "a multiple of 32";
    case block_sizes::any: return "any size";
  }
  return "?";
}

// Throws std::invalid_argument, with the reason, for a block size the stage does not handle.
inline void require_block_size(int threads, block_sizes sizes, int min_threads) {
  stage probe{{}, nullptr, sizes, min_threads};
  if (!supports(probe, threads))
    throw std::invalid_argument("this stage needs " + std::string(to_string(sizes)) + " threads per block in " +
                                std::to_string(min_threads) + "..1024, not " + std::to_string(threads));
}

// As many blocks as the GPU holds at once (every SM full), but no more than the input needs when
// each thread takes `per_thread` elements; at least one, so n = 0 still writes its answer (0).
template <class Kernel>
int grid_size(Kernel kernel, const config &cfg, std::size_t n, std::size_t per_thread = 1, std::size_t shared = 0) {
  if (cfg.blocks > 0) return cfg.blocks;
  const std::size_t per_block = per_thread * std::size_t(cfg.threads);
  const std::size_t needed = (n + per_block - 1) / per_block;
  const std::size_t resident = std::size_t(course::resident_blocks(kernel, cfg.threads, shared));
  return int(std::max<std::size_t>(1, std::min(needed, resident)));
}

// Calls f(std::integral_constant<unsigned, B>{}) for the power of two B == threads, 1..1024: the
// host-side switch of 12.3 that lets one run-time value pick a kernel compiled for it.
template <unsigned B = 1, class F>
void dispatch_block_size(int threads, F &&f) {
  if constexpr (B <= 1024) {
    if (unsigned(threads) == B) return f(std::integral_constant<unsigned, B>{});
    dispatch_block_size<B * 2>(threads, f);
  } else {
    throw std::invalid_argument("no kernel compiled for " + std::to_string(threads) + " threads per block");
  }
}

// The two passes of 12.2: `blocks` blocks each reduce a grid-stride share of in[] to one partial
// result in the workspace (kernel `first`), then one block reduces those partials to *answer
// (kernel `second`). `shared` is the kernels' dynamic shared memory in bytes.
template <class T, class In>
void two_pass(void (*first)(T *, const In *, std::size_t), void (*second)(T *, const T *, std::size_t), T *d_answer,
              const In *d_in, std::size_t n, const config &cfg, workspace &ws, cudaStream_t stream,
              std::size_t shared = 0) {
  const int blocks = grid_size(first, cfg, n, 1, shared);
  T *partials = ws.partials<T>(std::size_t(blocks));
  first<<<blocks, cfg.threads, shared, stream>>>(partials, d_in, n);
  CUDA_CHECK_LAUNCH();
  second<<<1, cfg.threads, shared, stream>>>(d_answer, partials, std::size_t(blocks));
  CUDA_CHECK_LAUNCH();
}

// The same kernel (out, in, n) for both passes, as in the book.
template <class T>
void two_pass(void (*kernel)(T *, const T *, std::size_t), T *d_answer, const T *d_in, std::size_t n,
              const config &cfg, workspace &ws, cudaStream_t stream, std::size_t shared = 0) {
  two_pass(kernel, kernel, d_answer, d_in, n, cfg, ws, stream, shared);
}

struct plus {
  template <class T>
  __host__ __device__ T operator()(T a, T b) const { return a + b; }
};

// 12.3's block reduction, for a block of B threads (a power of two, 1..1024, a template parameter
// so every loop below unrolls and every test on B is decided at compile time). Each thread brings
// `value`; thread 0 returns the block's result (other threads return partial results). Uses
// partials[0, B) and leaves it in use: a second call needs a __syncthreads() between.
//
// The last 64 values are folded by warp 0 alone, with __syncwarp() instead of __syncthreads().
// In each step lane i reads slot i + offset (which no lane writes in that step) and writes slot
// i; the __syncwarp() after the step makes the writes visible to the lanes that read them in the
// next step. Without it (the book's volatile form) lanes of a warp are not guaranteed to move in
// lock-step on Volta and later, so a read may see a slot before its step wrote it.
template <unsigned B, class T, class Op>
__device__ T block_reduce(T *partials, T value, Op op) {
  static_assert(B >= 1 && B <= 1024 && (B & (B - 1)) == 0, "B must be a power of two in 1..1024");
  const unsigned tid = threadIdx.x;
  partials[tid] = value;
  __syncthreads();
#pragma unroll
  for (unsigned active = B / 2; active >= 64; active /= 2) {
    if (tid < active) partials[tid] = value = op(value, partials[tid + active]);
    __syncthreads();
  }
  if (tid < 32) {
    constexpr unsigned mask = B >= 32 ? 0xffffffffu : (1u << (B % 32)) - 1u;  // the lanes that exist
#pragma unroll
    for (unsigned offset = 32; offset > 0; offset /= 2) {
      if (B >= 2 * offset) {
        if (tid < offset) partials[tid] = value = op(value, partials[tid + offset]);
        __syncwarp(mask);
      }
    }
  }
  return value;
}

}  // namespace reduction
