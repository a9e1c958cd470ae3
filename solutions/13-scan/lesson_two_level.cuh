// SPDX-License-Identifier: BSD-3-Clause
// Lesson header, taught by stage 04 (04_two_level.cu). The CUDA Handbook 13.4.3 (after Merrill;
// listings 13.10 scanReduceSubarrays, 13.11 scan2Level_kernel, 13.12 scan2Level): reduce-then-scan
// with a fixed, small number of partial sums instead of a recursion. One element per thread per
// tile of B, as in the book. Stage 05 keeps scan_partials and gives the other two passes four
// elements per thread (lesson_two_level_vec4.cuh).
//
// Block b owns the range [b * per_block, (b + 1) * per_block) of the input (per_block a multiple of
// B; the last range ends at n). Pass 1 sums each range into partials[b]; pass 2, one block, scans
// the partials in place; pass 3 scans each range tile by tile from partials[b - 1].
#pragma once

#include "lesson_block_scan.cuh"
#include "lesson_reduce_block.cuh"
#include "scan_common.cuh"

namespace scan {

// Pass 1: partials[b] = the sum of block b's range.
template <unsigned B, class T>
__global__ void reduce_ranges(T *partials, const T *in, std::size_t n, std::size_t per_block) {
  __shared__ T sh[B];
  // EXERCISE BEGIN: store the sum of this block's range in partials[blockIdx.x].
  const std::size_t begin = blockIdx.x * per_block;
  const std::size_t end = min(n, begin + per_block);
  T sum = 0;
  for (std::size_t i = begin + threadIdx.x; i < end; i += B) sum += in[i];
  const T total = reduce_block<B>(sh, sum);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
  // EXERCISE END
}

// Pass 2: one block scans partials[0, count) in place, inclusive, B at a time, on the block scan
// BlockScan (shared_block_scan here; stage 06 runs it on warp_block_scan).
template <unsigned B, class BlockScan, class T>
__global__ void scan_partials(T *partials, std::size_t count) {
  __shared__ typename BlockScan::template storage<B, T> s;
  // EXERCISE BEGIN: scan partials[0, count) in place, count being possibly more than B.
  T carry = 0;
  for (std::size_t base = 0; base < count; base += B) {
    const std::size_t i = base + threadIdx.x;
    const T x = i < count ? partials[i] : T(0);
    T total;
    const T incl = BlockScan::template inclusive<B>(s, x, total);
    if (i < count) partials[i] = carry + incl;
    carry += total;
  }
  // EXERCISE END
}

// Pass 3: block b scans its range tile by tile (B elements a tile), starting from the sum of the
// ranges before it, and writes the inclusive or exclusive scan.
template <unsigned B, class T>
__global__ void scan_ranges(T *out, const T *in, const T *partials, std::size_t n,
                            std::size_t per_block, bool inclusive) {
  __shared__ block_scan_storage<B, T> s;
  // EXERCISE BEGIN: scan this block's range into out tile by tile, counting from the sum of every
  // range before it.
  const std::size_t begin = blockIdx.x * per_block;
  const std::size_t end = min(n, begin + per_block);
  T carry = blockIdx.x ? partials[blockIdx.x - 1] : T(0);
  for (std::size_t first = begin; first < end; first += B) {
    const std::size_t i = first + threadIdx.x;
    const T x = i < end ? in[i] : T(0);
    T total;
    const T incl = scan_block<B>(s, x, total);
    if (i < end) out[i] = carry + (inclusive ? incl : incl - x);
    carry += total;
  }
  // EXERCISE END
}

// The three launches, B threads per block: as many ranges as blocks of pass 1 fit on the GPU at
// once (or config::partials), each a whole number of tiles of B.
template <unsigned B, class T>
void two_level_scan(T *out, const T *in, std::size_t n, bool inclusive, const config &cfg,
                    workspace &ws, cudaStream_t stream) {
  if (n == 0) return;
  const two_level_plan p = plan_two_level(n, B, wanted_ranges(cfg, reduce_ranges<B, T>, B));
  const std::size_t per_block = p.tiles_per_block * B;
  T *partials = ws.partials<T>(p.blocks);
  reduce_ranges<B><<<unsigned(p.blocks), B, 0, stream>>>(partials, in, n, per_block);
  CUDA_CHECK_LAUNCH();
  scan_partials<B, shared_block_scan><<<1, B, 0, stream>>>(partials, p.blocks);
  CUDA_CHECK_LAUNCH();
  scan_ranges<B><<<unsigned(p.blocks), B, 0, stream>>>(out, in, partials, n, per_block, inclusive);
  CUDA_CHECK_LAUNCH();
}

}  // namespace scan
