// SPDX-License-Identifier: BSD-3-Clause
// What several scan stages share: refusing block sizes, the host switch from a block size to a
// template argument, scanBlock (13.4.1: an inclusive scan of one value per thread across a block
// in shared memory) and the two-level reduce-then-scan kernels (13.4.3), written once and
// parameterised by the block scan, so stage 04 runs them on scanBlock and stage 05 on warp scans.
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
    throw std::invalid_argument("scan stages need a power of two in 32..1024 threads per block, not " +
                                std::to_string(threads));
}

// Calls f(std::integral_constant<unsigned, B>{}) for the power of two B == threads, 32..1024.
template <unsigned B = 32, class F>
void dispatch_threads(int threads, F &&f) {
  if constexpr (B <= 1024) {
    if (unsigned(threads) == B) return f(std::integral_constant<unsigned, B>{});
    dispatch_threads<B * 2>(threads, f);
  } else {
    throw std::invalid_argument("no kernel compiled for " + std::to_string(threads) + " threads per block");
  }
}

// Calls f(std::integral_constant<predicate, P>{}) for P == p: a kernel templated on the predicate
// tests it with a constant, where a run-time p costs a switch per element (stage 08).
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

// What the compaction stages' entry points (06, 08) do around their kernels: refuse block sizes
// and sizes whose count would not fit 32 bits, switch on the block size, then copy the count of
// kept elements back and wait for it. launch(std::integral_constant<unsigned, B>) enqueues the
// kernels and returns the device address where the count will be.
template <class F>
std::size_t compact_with_block_size(std::size_t n, const config &cfg, cudaStream_t stream, F &&launch) {
  require_threads(cfg.threads);
  if (n == 0) return 0;
  if (n > 0x7fffffffu) throw std::invalid_argument("compaction counts in 32 bits: at most 2^31 - 1 elements");
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
  for (std::size_t blocks = ceil_div(n, B); blocks > 1; blocks = ceil_div(blocks, B)) total += blocks;
  return total;
}

// scanBlock (13.4.1): returns x[0] + ... + x[threadIdx.x] over the block's B values and sets
// total to the sum of all B. Every thread of the block must call it (it synchronises). sh holds
// B values; the leading barrier lets a caller call it again in a loop on the same sh.
template <unsigned B, class T>
__device__ T scan_block(T *sh, T x, T &total) {
  const unsigned t = threadIdx.x;
  __syncthreads();  // earlier readers of sh are done
  sh[t] = x;
  __syncthreads();
  for (unsigned offset = 1; offset < B; offset *= 2) {
    const T y = t >= offset ? sh[t - offset] : T(0);
    __syncthreads();  // everyone has read before anyone overwrites
    x += y;
    sh[t] = x;
    __syncthreads();
  }
  total = sh[B - 1];
  return x;
}

// The block scan used by stages 02..04 and 06, as a policy for the two-level kernels.
struct shared_block_scan {
  template <unsigned B, class T>
  struct storage {
    T sh[B];
  };
  template <unsigned B, class T>
  __device__ static T inclusive(storage<B, T> &s, T x, T &total) {
    return scan_block<B>(s.sh, x, total);
  }
};

// --- warp shuffles (13.5.3, 13-18) ------------------------------------------------------------
constexpr unsigned full_mask = 0xffffffffu;

// Inclusive scan across the 32 lanes of a warp with __shfl_up_sync (all 32 lanes call it).
struct shfl_warp_scan {
  template <class T>
  __device__ static T inclusive(T x, unsigned lane) {
#pragma unroll
    for (unsigned offset = 1; offset < 32; offset *= 2) {
      const T y = __shfl_up_sync(full_mask, x, offset);
      if (lane >= offset) x += y;
    }
    return x;
  }
};

// The block scan of 13-18 on a warp scan WarpScan: each warp scans its 32 values, the warps'
// totals go to shared memory, warp 0 scans them, each warp adds the total of the warps before it.
// Two barriers instead of scanBlock's 2 log2(B). Same interface as shared_block_scan.
template <class WarpScan>
struct warp_block_scan {
  template <unsigned B, class T>
  struct storage {
    T warp_sums[32];
  };
  template <unsigned B, class T>
  __device__ static T inclusive(storage<B, T> &s, T x, T &total) {
    constexpr unsigned warps = B / 32;
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    x = WarpScan::inclusive(x, lane);
    __syncthreads();  // earlier readers of s are done
    if (lane == 31) s.warp_sums[warp] = x;
    __syncthreads();
    if (warp == 0) {
      T w = lane < warps ? s.warp_sums[lane] : T(0);
      w = WarpScan::inclusive(w, lane);
      // Every lane has read before any lane writes. Not only lane < warps reads: racecheck caught
      // the compiler loading warp_sums[0] in every lane at B = 32 (warps = 1), where lane 0 then
      // writes it; a shuffle orders the lanes' registers, not their shared-memory accesses.
      __syncwarp();
      if (lane < warps) s.warp_sums[lane] = w;
    }
    __syncthreads();
    if (warp > 0) x += s.warp_sums[warp - 1];
    total = s.warp_sums[warps - 1];
    return x;
  }
};

// --- four elements per thread -------------------------------------------------------------------
// The two-level and single-pass kernels give each thread four consecutive elements, read and
// written as one 16-byte vector (LDG.E.128 / STG.E.128): a quarter of the memory instructions and
// four times the bytes in flight of one element per thread, which is what a memory-bound kernel
// needs to approach the copy bandwidth (chapter 12, stage 10). The vector path needs 16-byte
// aligned arrays (`aligned`, decided once on the host) and four elements in range; otherwise the
// same four are read one by one.
template <class T> struct vec4_of;
template <> struct vec4_of<int> { using type = int4; };
template <> struct vec4_of<float> { using type = float4; };

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

// v becomes its own inclusive (or exclusive) scan, starting from `base`; returns base + the sum of v.
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

// --- two-level reduce-then-scan (13.4.3) --------------------------------------------------------
// The input is cut into `blocks` ranges of tiles_per_block tiles of 4B elements each (B threads,
// four elements a thread).
template <unsigned B>
constexpr std::size_t tile_elements = 4 * std::size_t(B);

// What pass 1 adds up: the elements themselves (scan) or 0/1 flags (stage 06, compaction).
struct identity {
  template <class T>
  __device__ T operator()(T x) const { return x; }
};

// Pass 1: block b sums op(element) over its range into partials[b]. While four tiles ahead are
// in range, a thread has four 16-byte loads in flight.
template <unsigned B, class BlockScan, class T, class Op = identity>
__global__ void reduce_ranges(T *partials, const T *in, std::size_t n, std::size_t tiles_per_block, bool aligned,
                              Op op = {}) {
  __shared__ typename BlockScan::template storage<B, T> s;
  constexpr std::size_t tile = tile_elements<B>;
  const std::size_t begin = blockIdx.x * tiles_per_block * tile;
  const std::size_t end = min(n, begin + tiles_per_block * tile);
  T sum = 0;
  std::size_t i = begin + 4 * threadIdx.x;
  for (; i + 3 * tile + 4 <= end; i += 4 * tile) {
    T v[4][4];
#pragma unroll
    for (unsigned u = 0; u < 4; ++u) load4(v[u], in, i + u * tile, end, aligned);
#pragma unroll
    for (unsigned u = 0; u < 4; ++u)
#pragma unroll
      for (unsigned k = 0; k < 4; ++k) sum += op(v[u][k]);
  }
  for (; i < end; i += tile) {
    T v[4];
    load4(v, in, i, end, aligned);
#pragma unroll
    for (unsigned k = 0; k < 4; ++k)
      if (i + k < end) sum += op(v[k]);
  }
  T total;
  BlockScan::template inclusive<B>(s, sum, total);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

// Pass 2: one block scans partials[0, count) in place, inclusive, B at a time.
template <unsigned B, class BlockScan, class T>
__global__ void scan_partials(T *partials, std::size_t count) {
  __shared__ typename BlockScan::template storage<B, T> s;
  T carry = 0;
  for (std::size_t base = 0; base < count; base += B) {
    const std::size_t i = base + threadIdx.x;
    const T x = i < count ? partials[i] : T(0);
    T total;
    const T incl = BlockScan::template inclusive<B>(s, x, total);
    if (i < count) partials[i] = carry + incl;
    carry += total;
  }
}

// Pass 3: block b scans its range tile by tile, starting from the sum of the ranges before it:
// each thread scans its four elements, the block scans the threads' sums.
template <unsigned B, class BlockScan, class T>
__global__ void scan_ranges(T *out, const T *in, const T *partials, std::size_t n, std::size_t tiles_per_block,
                            bool inclusive, bool aligned) {
  __shared__ typename BlockScan::template storage<B, T> s;
  constexpr std::size_t tile = tile_elements<B>;
  const std::size_t begin = blockIdx.x * tiles_per_block * tile;
  const std::size_t end = min(n, begin + tiles_per_block * tile);
  T carry = blockIdx.x ? partials[blockIdx.x - 1] : T(0);
  for (std::size_t first = begin; first < end; first += tile) {  // every thread runs the same trips
    const std::size_t i = first + 4 * threadIdx.x;
    T v[4];
    load4(v, in, i, end, aligned);
    const T sum = v[0] + v[1] + v[2] + v[3];
    T total;
    const T incl = BlockScan::template inclusive<B>(s, sum, total);
    scan4(v, carry + (incl - sum), inclusive);
    store4(out, i, end, v, aligned);
    carry += total;
  }
}

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
  return cfg.partials > 0 ? std::size_t(cfg.partials) : std::size_t(course::resident_blocks(kernel, B));
}

// The three launches of the two-level scan, B threads per block, on block scan BlockScan.
template <unsigned B, class BlockScan, class T>
void two_level_scan(T *out, const T *in, std::size_t n, bool inclusive, const config &cfg, workspace &ws,
                    cudaStream_t stream) {
  if (n == 0) return;
  const bool aligned = aligned16(in) && aligned16(out);
  const two_level_plan p = plan_two_level(n, tile_elements<B>, wanted_ranges(cfg, reduce_ranges<B, BlockScan, T>, B));
  T *partials = ws.partials<T>(p.blocks);
  reduce_ranges<B, BlockScan><<<unsigned(p.blocks), B, 0, stream>>>(partials, in, n, p.tiles_per_block, aligned);
  CUDA_CHECK_LAUNCH();
  scan_partials<B, BlockScan><<<1, B, 0, stream>>>(partials, p.blocks);
  CUDA_CHECK_LAUNCH();
  scan_ranges<B, BlockScan><<<unsigned(p.blocks), B, 0, stream>>>(out, in, partials, n, p.tiles_per_block, inclusive,
                                                                   aligned);
  CUDA_CHECK_LAUNCH();
}

}  // namespace scan
