// SPDX-License-Identifier: BSD-3-Clause
// Plumbing every scan stage shares: refusing block sizes, the host switches from a block size (or
// a predicate) to a template argument, the workspace sizes of the recursive stages, the 16-byte
// loads and stores of four elements per thread, and how the two-level stages cut n elements into
// ranges. No kernel that a stage teaches lives here: those are in the lesson headers
// (solutions/13-scan/*.cuh, stubbed in chapters/13-scan/):
//   lesson_block_scan.cuh       stage 02  scanWarp and scanBlock, listing 13.3
//   lesson_reduce_block.cuh     stage 03  reduceBlock, the first pass of listing 13.7
//   lesson_two_level.cuh        stage 04  the three passes of 13.4.3, one element per thread
//   lesson_two_level_vec4.cuh   stage 05  the same passes, four consecutive elements per thread
//   lesson_warp_block_scan.cuh  stage 06  the __shfl_up_sync warp scan and the block scan on it
//   (13-18) lesson_lookback.cuh         stage 08  the tile status words and decoupled look-back
// Everything is templated on the element type T (int or float).
#pragma once

#include "scan.h"

#include "common/check.h"
#include "common/launch.h"

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <cstdint>
#include <type_traits>

namespace scan {

inline void require_threads(int threads) {
  if (!supports_threads(threads))
    throw std::invalid_argument(
        "scan stages need a power of two in 32..1024 threads per block, not " +
        std::to_string(threads));
}

// Calls f(std::integral_constant<unsigned, B>{}) for the power of two B == threads, 32..1024.
template <unsigned B = 32, class F>
void dispatch_threads(int threads, F &&f) {
  if constexpr (B <= 1024) {
    if (unsigned(threads) == B) return f(std::integral_constant<unsigned, B>{});
    dispatch_threads<B * 2>(threads, f);
  } else {
    throw std::invalid_argument("no kernel compiled for " + std::to_string(threads) +
                                " threads per block");
  }
}

// Calls f(std::integral_constant<predicate, P>{}) for P == p: a kernel templated on the predicate
// tests it with a constant, where a run-time p costs a switch per element (stage 09).
template <class F>
void dispatch_predicate(predicate p, F &&f) {
  using P = predicate;
  switch (p) {
    case P::odd: return f(std::integral_constant<P, P::odd>{});
    case P::even: return f(std::integral_constant<P, P::even>{});
    case P::positive: return f(std::integral_constant<P, P::positive>{});
    case P::all: return f(std::integral_constant<P, P::all>{});
    case P::none: return f(std::integral_constant<P, P::none>{});
  }
  throw std::invalid_argument("unknown predicate");
}

// require_threads, then dispatch_threads: what every stage's entry point starts with.
template <class F>
void with_block_size(int threads, F &&f) {
  require_threads(threads);
  dispatch_threads(threads, f);
}

inline std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

// What the compaction stages' entry points (07, 09) do around their kernels: refuse block sizes
// and sizes whose count would not fit 32 bits, switch on the block size, then copy the count of
// kept elements back and wait for it. launch(std::integral_constant<unsigned, B>) enqueues the
// kernels and returns the device address where the count will be.
template <class F>
std::size_t compact_with_block_size(std::size_t n, const config &cfg, cudaStream_t stream,
                                    F &&launch) {
  require_threads(cfg.threads);
  if (n == 0) return 0;
  if (n > 0x7fffffffu)
    throw std::invalid_argument("compaction counts in 32 bits: at most 2^31 - 1 elements");
  const unsigned *d_count = nullptr;
  dispatch_threads(cfg.threads, [&](auto b) { d_count = launch(b); });
  unsigned count = 0;
  CUDA_CHECK(cudaMemcpyAsync(&count, d_count, sizeof count, cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return count;
}

// The recursive stages (02, 03): the partial sums of every level of the recursion, one level
// after the other, for n elements in blocks of B.
inline std::size_t recursive_partials(std::size_t n, unsigned B) {
  std::size_t total = 0;
  for (std::size_t blocks = ceil_div(n, B); blocks > 1; blocks = ceil_div(blocks, B))
    total += blocks;
  return total;
}

constexpr unsigned full_mask = 0xffffffffu;

// --- four elements per thread -------------------------------------------------------------------
// The two-level and single-pass kernels give each thread four consecutive elements, read and
// written as one 16-byte vector (LDG.E.128 / STG.E.128): a quarter of the memory instructions and
// four times the bytes in flight of one element per thread, which is what a memory-bound kernel
// needs to approach the copy bandwidth (chapter 12, stage 10). The vector path needs 16-byte
// aligned arrays (`aligned`, decided once on the host) and four elements in range; otherwise the
// same four are read one by one.
template <class T>
struct vec4_of;
template <>
struct vec4_of<int> {
  using type = int4;
};
template <>
struct vec4_of<float> {
  using type = float4;
};

template <class T>
inline bool aligned16(const T *p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

// v = in[i, i+4), 0 past end.
template <class T>
__device__ void load4(T (&v)[4], const T *in, std::size_t i, std::size_t end, bool aligned) {
  if (aligned && i + 4 <= end) {
    const auto q = *reinterpret_cast<const typename vec4_of<T>::type *>(in + i);
    v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
  } else {
#pragma unroll
    for (unsigned k = 0; k < 4; ++k) v[k] = i + k < end ? in[i + k] : T(0);
  }
}

// out[i, min(i+4, end)) = v.
template <class T>
__device__ void store4(T *out, std::size_t i, std::size_t end, const T (&v)[4], bool aligned) {
  if (aligned && i + 4 <= end) {
    *reinterpret_cast<typename vec4_of<T>::type *>(out + i) = {v[0], v[1], v[2], v[3]};
  } else {
#pragma unroll
    for (unsigned k = 0; k < 4; ++k)
      if (i + k < end) out[i + k] = v[k];
  }
}

// v becomes its own inclusive (or exclusive) scan, starting from `base`; returns base + the sum of
// v.
template <class T>
__device__ T scan4(T (&v)[4], T base, bool inclusive) {
#pragma unroll
  for (unsigned k = 0; k < 4; ++k) {
    const T x = v[k];
    if (inclusive) base += x;
    v[k] = base;
    if (!inclusive) base += x;
  }
  return base;
}

// --- two-level reduce-then-scan (13.4.3): how the work is cut ----------------------------------
// What the first pass adds up: the elements themselves (scan) or 0/1 flags (stage 07, compaction).
struct identity {
  template <class T>
  __device__ T operator()(T x) const {
    return x;
  }
};

// How the two-level stages cut n elements: `blocks` ranges of tiles_per_block tiles of `tile`.
struct two_level_plan {
  std::size_t blocks = 0, tiles_per_block = 0;
};
inline two_level_plan plan_two_level(std::size_t n, std::size_t tile, std::size_t wanted_blocks) {
  two_level_plan p;
  const std::size_t tiles = ceil_div(n, tile);
  const std::size_t blocks = std::max<std::size_t>(1, std::min(tiles, wanted_blocks));
  p.tiles_per_block = ceil_div(tiles, blocks);
  p.blocks = ceil_div(tiles, p.tiles_per_block);  // no empty block at the end
  return p;
}

// How many ranges: config::partials, or as many blocks of `kernel` as the GPU holds at once.
template <class Kernel>
std::size_t wanted_ranges(const config &cfg, Kernel kernel, unsigned B) {
  return cfg.partials > 0 ? std::size_t(cfg.partials)
                          : std::size_t(course::resident_blocks(kernel, B));
}

}  // namespace scan
