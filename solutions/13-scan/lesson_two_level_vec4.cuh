// SPDX-License-Identifier: BSD-3-Clause
// Lesson header, taught by stage 05 (05_vector_io.cu). Stage 04's two-level passes with each thread
// owning four consecutive elements of a tile of 4B, read and written as one 16-byte vector
// (scan::load4 / scan::store4 in scan_common.cuh, LDG.E.128 / STG.E.128), as Merrill's kernels and
// CUB do: a quarter of the memory instructions and four times the bytes in flight per thread, and
// the block scan runs once per four elements. Pass 2 is stage 04's scan_partials. Stages 06 and 07
// run these passes.
#pragma once

#include "lesson_block_scan.cuh"
#include "lesson_reduce_block.cuh"
#include "scan_common.cuh"
#include "lesson_two_level.cuh"

namespace scan {

// Tiles of 4B elements: B threads, four elements a thread.
template <unsigned B>
constexpr std::size_t tile_elements = 4 * std::size_t(B);

// Pass 1: partials[b] = the sum of op(element) over block b's range of tiles_per_block tiles
// (Op: the elements themselves for the scan, 0/1 flags for stage 07's compaction).
template <unsigned B, class T, class Op = identity>
__global__ void reduce_ranges4(T *partials, const T *in, std::size_t n, std::size_t tiles_per_block,
                               bool aligned, Op op = {}) {
  __shared__ T sh[B];
  constexpr std::size_t tile = tile_elements<B>;
  const std::size_t begin = blockIdx.x * tiles_per_block * tile;
  const std::size_t end = min(n, begin + tiles_per_block * tile);
  // EXERCISE BEGIN: store the sum of op() over this block's range in partials[blockIdx.x], reading
  // four elements per thread with four tiles' loads in flight.
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
  const T total = reduce_block<B>(sh, sum);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
  // EXERCISE END
}

// Pass 3: block b scans its range tile by tile, starting from the sum of the ranges before it, on
// the block scan BlockScan (shared_block_scan in stage 05, warp_block_scan in stage 06).
template <unsigned B, class BlockScan, class T>
__global__ void scan_ranges4(T *out, const T *in, const T *partials, std::size_t n,
                             std::size_t tiles_per_block, bool inclusive, bool aligned) {
  __shared__ typename BlockScan::template storage<B, T> s;
  constexpr std::size_t tile = tile_elements<B>;
  const std::size_t begin = blockIdx.x * tiles_per_block * tile;
  const std::size_t end = min(n, begin + tiles_per_block * tile);
  // EXERCISE BEGIN: scan this block's range into out tile by tile, four elements per thread,
  // counting from the sum of every range before it.
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
  // EXERCISE END
}

// The three launches, B threads per block, on block scan BlockScan.
template <unsigned B, class BlockScan, class T>
void two_level_scan4(T *out, const T *in, std::size_t n, bool inclusive, const config &cfg,
                     workspace &ws, cudaStream_t stream) {
  if (n == 0) return;
  const bool aligned = aligned16(in) && aligned16(out);
  const two_level_plan p =
      plan_two_level(n, tile_elements<B>, wanted_ranges(cfg, reduce_ranges4<B, T>, B));
  T *partials = ws.partials<T>(p.blocks);
  reduce_ranges4<B>
      <<<unsigned(p.blocks), B, 0, stream>>>(partials, in, n, p.tiles_per_block, aligned);
  CUDA_CHECK_LAUNCH();
  scan_partials<B, BlockScan><<<1, B, 0, stream>>>(partials, p.blocks);
  CUDA_CHECK_LAUNCH();
  scan_ranges4<B, BlockScan><<<unsigned(p.blocks), B, 0, stream>>>(
      out, in, partials, n, p.tiles_per_block, inclusive, aligned);
  CUDA_CHECK_LAUNCH();
}

}  // namespace scan
