// SPDX-License-Identifier: BSD-3-Clause
// Stage 03: recursive reduce-then-scan. The CUDA Handbook 13.4.2 (listings 13.7 to 13.9).
//
// Changes from stage 02: the first pass only reduces (lesson_reduce_block.cuh, chapter 12's
// reduceBlock as listing 13.7 uses it); after the partials are scanned, each block scans its
// elements again from the sum of the blocks before it and writes them once. Traffic: 3N.
// What to look for: traffic alone predicts 4/3 of stage 02's throughput; the speedup column shows
// how much of it one element per thread gets (the README says why). In the SASS, no per-element STG
// in the first kernel, one BAR.SYNC per halving of its fold and SHFL.DOWN for the last warp.
#include "lesson_block_scan.cuh"
#include "lesson_reduce_block.cuh"

namespace {

template <unsigned B, class T>
__global__ void reduce_blocks(T *partials, const T *in, std::size_t n) {
  __shared__ T sh[B];
  // EXERCISE BEGIN: store the sum of this block's elements in partials[blockIdx.x].
  const std::size_t i = blockIdx.x * std::size_t(B) + threadIdx.x;
  const T total = scan::reduce_block<B>(sh, i < n ? in[i] : T(0));
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
  // EXERCISE END
}

// Scans block b's elements and adds base = partials[b - 1] (0 for block 0 or without partials).
template <unsigned B, class T>
__global__ void scan_with_base(T *out, const T *in, const T *partials, std::size_t n,
                               bool inclusive) {
  __shared__ scan::block_scan_storage<B, T> s;
  // EXERCISE BEGIN: write this block's elements scanned, counting from the sum of every element
  // before the block.
  const std::size_t i = blockIdx.x * std::size_t(B) + threadIdx.x;
  const T x = i < n ? in[i] : T(0);
  const T base = (partials && blockIdx.x) ? partials[blockIdx.x - 1] : T(0);
  T total;
  const T incl = scan::scan_block<B>(s, x, total);
  if (i < n) out[i] = base + (inclusive ? incl : incl - x);
  // EXERCISE END
}

template <unsigned B, class T>
void reduce_then_scan(T *out, const T *in, std::size_t n, bool inclusive, T *scratch,
                      cudaStream_t stream) {
  if (n == 0) return;
  const std::size_t blocks = scan::ceil_div(n, B);
  T *partials = nullptr;
  if (blocks > 1) {
    partials = scratch;
    reduce_blocks<B, T><<<unsigned(blocks), B, 0, stream>>>(partials, in, n);
    CUDA_CHECK_LAUNCH();
    reduce_then_scan<B, T>(partials, partials, blocks, true, scratch + blocks, stream);
  }
  scan_with_base<B, T><<<unsigned(blocks), B, 0, stream>>>(out, in, partials, n, inclusive);
  CUDA_CHECK_LAUNCH();
}

template <class T>
void scan_entry(T *d_out, const T *d_in, std::size_t n, bool inclusive, const scan::config &cfg,
                scan::workspace &ws, cudaStream_t stream) {
  scan::with_block_size(cfg.threads, [&](auto b) {
    constexpr unsigned B = decltype(b)::value;
    reduce_then_scan<B, T>(d_out, d_in, n, inclusive,
                           ws.partials<T>(scan::recursive_partials(n, B)), stream);
  });
}

}  // namespace

SCAN_STAGE("recursive reduce-then-scan (13.4.2)", scan_entry<int>, scan_entry<float>, false,
           nullptr, nullptr, 3);
