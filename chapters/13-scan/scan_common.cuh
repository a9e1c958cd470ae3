// SPDX-License-Identifier: BSD-3-Clause
// What several scan stages share: refusing block sizes, the host switch from a block size to a
// template argument, scanBlock (13.4.1: an inclusive scan of one value per thread across a block
// in shared memory) and the two-level reduce-then-scan kernels (13.4.3), written once and
// parameterised by the block scan, so stage 04 runs them on scanBlock and stage 05 on warp scans.
#pragma once

#include "scan.h"

#include "common/check.h"
#include "common/launch.h"

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>
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

// require_threads, then dispatch_threads: what every stage's entry point starts with.
template <class F>
void with_block_size(int threads, F &&f) {
  require_threads(threads);
  dispatch_threads(threads, f);
}

inline std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

// The recursive stages (02, 03): the partial sums of every level of the recursion, one level
// after the other, for n elements in blocks of B.
inline std::size_t recursive_partials(std::size_t n, unsigned B) {
  std::size_t total = 0;
  for (std::size_t blocks = ceil_div(n, B); blocks > 1; blocks = ceil_div(blocks, B)) total += blocks;
  return total;
}

// scanBlock (13.4.1): returns x[0] + ... + x[threadIdx.x] over the block's B values and sets
// total to the sum of all B. Every thread of the block must call it (it synchronises). sh holds
// B ints; the leading barrier lets a caller call it again in a loop on the same sh.
template <unsigned B>
__device__ int scan_block(int *sh, int x, int &total) {
  const unsigned t = threadIdx.x;
  __syncthreads();  // earlier readers of sh are done
  sh[t] = x;
  __syncthreads();
  for (unsigned offset = 1; offset < B; offset *= 2) {
    const int y = t >= offset ? sh[t - offset] : 0;
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
  template <unsigned B>
  struct storage {
    int sh[B];
  };
  template <unsigned B>
  __device__ static int inclusive(storage<B> &s, int x, int &total) {
    return scan_block<B>(s.sh, x, total);
  }
};

// --- warp shuffles (13.5.3, 13-18) ------------------------------------------------------------
constexpr unsigned full_mask = 0xffffffffu;

// Inclusive scan across the 32 lanes of a warp with __shfl_up_sync (all 32 lanes call it).
struct shfl_warp_scan {
  __device__ static int inclusive(int x, unsigned lane) {
#pragma unroll
    for (unsigned offset = 1; offset < 32; offset *= 2) {
      const int y = __shfl_up_sync(full_mask, x, offset);
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
  template <unsigned B>
  struct storage {
    int warp_sums[32];
  };
  template <unsigned B>
  __device__ static int inclusive(storage<B> &s, int x, int &total) {
    constexpr unsigned warps = B / 32;
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    x = WarpScan::inclusive(x, lane);
    __syncthreads();  // earlier readers of s are done
    if (lane == 31) s.warp_sums[warp] = x;
    __syncthreads();
    if (warp == 0) {
      int w = lane < warps ? s.warp_sums[lane] : 0;
      w = WarpScan::inclusive(w, lane);
      if (lane < warps) s.warp_sums[lane] = w;
    }
    __syncthreads();
    if (warp > 0) x += s.warp_sums[warp - 1];
    total = s.warp_sums[warps - 1];
    return x;
  }
};

// --- two-level reduce-then-scan (13.4.3) --------------------------------------------------------
// The input is cut into `blocks` ranges of tiles_per_block tiles of B elements each.
// What pass 1 adds up: the elements themselves (scan) or 0/1 flags (stage 06, compaction).
struct identity {
  __device__ int operator()(int x) const { return x; }
};

// Pass 1: block b sums op(element) over its range into partials[b].
template <unsigned B, class BlockScan, class Op = identity>
__global__ void reduce_ranges(int *partials, const int *in, std::size_t n, std::size_t tiles_per_block, Op op = {}) {
  __shared__ typename BlockScan::template storage<B> s;
  const std::size_t begin = blockIdx.x * tiles_per_block * B;
  const std::size_t end = min(n, begin + tiles_per_block * B);
  int sum = 0;
  for (std::size_t i = begin + threadIdx.x; i < end; i += B) sum += op(in[i]);
  int total;
  BlockScan::template inclusive<B>(s, sum, total);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

// Pass 2: one block scans partials[0, count) in place, inclusive, B at a time.
template <unsigned B, class BlockScan>
__global__ void scan_partials(int *partials, std::size_t count) {
  __shared__ typename BlockScan::template storage<B> s;
  int carry = 0;
  for (std::size_t base = 0; base < count; base += B) {
    const std::size_t i = base + threadIdx.x;
    const int x = i < count ? partials[i] : 0;
    int total;
    const int incl = BlockScan::template inclusive<B>(s, x, total);
    if (i < count) partials[i] = carry + incl;
    carry += total;
  }
}

// Pass 3: block b scans its range tile by tile, starting from the sum of the ranges before it.
template <unsigned B, class BlockScan>
__global__ void scan_ranges(int *out, const int *in, const int *partials, std::size_t n, std::size_t tiles_per_block,
                            bool inclusive) {
  __shared__ typename BlockScan::template storage<B> s;
  const std::size_t begin = blockIdx.x * tiles_per_block * B;
  const std::size_t end = min(n, begin + tiles_per_block * B);
  int carry = blockIdx.x ? partials[blockIdx.x - 1] : 0;
  for (std::size_t tile = begin; tile < end; tile += B) {  // every thread runs the same trips
    const std::size_t i = tile + threadIdx.x;
    const int x = i < end ? in[i] : 0;
    int total;
    const int incl = BlockScan::template inclusive<B>(s, x, total);
    if (i < end) out[i] = carry + (inclusive ? incl : incl - x);
    carry += total;
  }
}

// How the two-level stages cut n elements: `blocks` ranges of tiles_per_block tiles of B.
struct two_level_plan {
  std::size_t blocks = 0, tiles_per_block = 0;
};
inline two_level_plan plan_two_level(std::size_t n, unsigned B, std::size_t wanted_blocks) {
  two_level_plan p;
  const std::size_t tiles = ceil_div(n, B);
  const std::size_t blocks = std::max<std::size_t>(1, std::min(tiles, wanted_blocks));
  p.tiles_per_block = ceil_div(tiles, blocks);
  p.blocks = ceil_div(tiles, p.tiles_per_block);  // no empty block at the end
  return p;
}

// The three launches of the two-level scan, B threads per block, on block scan BlockScan.
template <unsigned B, class BlockScan>
void two_level_scan(int *out, const int *in, std::size_t n, bool inclusive, const config &cfg, workspace &ws,
                    cudaStream_t stream) {
  if (n == 0) return;
  const std::size_t wanted =
      cfg.partials > 0 ? std::size_t(cfg.partials) : std::size_t(course::resident_blocks(reduce_ranges<B, BlockScan>, B));
  const two_level_plan p = plan_two_level(n, B, wanted);
  int *partials = ws.ints(p.blocks);
  reduce_ranges<B, BlockScan><<<unsigned(p.blocks), B, 0, stream>>>(partials, in, n, p.tiles_per_block);
  CUDA_CHECK_LAUNCH();
  scan_partials<B, BlockScan><<<1, B, 0, stream>>>(partials, p.blocks);
  CUDA_CHECK_LAUNCH();
  scan_ranges<B, BlockScan><<<unsigned(p.blocks), B, 0, stream>>>(out, in, partials, n, p.tiles_per_block, inclusive);
  CUDA_CHECK_LAUNCH();
}

}  // namespace scan
