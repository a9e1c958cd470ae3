// SPDX-License-Identifier: BSD-3-Clause
// Stage 03: recursive reduce-then-scan. The CUDA Handbook 13.4.2 (figure 13.14, listings 13.7 ..
// 13.9).
//
// The task: stage 02 writes every element twice, once in its first pass and again in the fan. But
// the first pass only has to produce each block's total, and 13.3 observes that the seeds of a fan
// need not come from a scan: any reduction will do. Write the first pass as a reduction (you write
// reduce_block in lesson_reduce_block.cuh), then a second pass that scans each block from the
// scanned total of the blocks before it and writes each element once. The book counts 3N of global
// traffic. Watch for: in place (out == in), no element may be read after it was written; and the
// speedup column, against what the traffic predicts.
#include "lesson_block_scan.cuh"
#include "lesson_reduce_block.cuh"

namespace {

template <unsigned B, class T>
__global__ void reduce_blocks(T *partials, const T *in, std::size_t n) {
  __shared__ T sh[B];
  // EXERCISE BEGIN: store the sum of this block's elements in partials[blockIdx.x].
  COURSE_TODO();
  // EXERCISE END
}

// Scans block b's elements and adds base = partials[b - 1] (0 for block 0 or without partials).
template <unsigned B, class T>
__global__ void scan_with_base(T *out, const T *in, const T *partials, std::size_t n,
                               bool inclusive) {
  __shared__ scan::block_scan_storage<B, T> s;
  // EXERCISE BEGIN: write this block's elements scanned, counting from the sum of every element
  // before the block.
  COURSE_TODO();
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
