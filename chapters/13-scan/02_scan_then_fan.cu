// SPDX-License-Identifier: BSD-3-Clause
// Stage 02: recursive scan-then-fan. The CUDA Handbook 13.4.1 (figures 13.12 and 13.13, listings
// 13.3 .. 13.6).
//
// The task: scan n elements with blocks of B threads, one element per thread. First write the block
// scan (lesson_block_scan.cuh): with it, each block can scan its own B elements. What a block then
// lacks is the sum of every element before it. The blocks' totals are themselves an array to scan,
// by the same procedure; once scanned, each block adds to its elements what comes before it. You
// write the kernel that scans the blocks and the kernel that fans the base sums out; the recursion
// is given. Count the global memory traffic per element as you go: the book counts 4N. Watch for: n
// that is not a multiple of B, the exclusive scan's first element, and the difference between a
// block's inclusive total and the base of the next block.
#include "lesson_block_scan.cuh"

namespace {

// Scans B elements per block; writes the block's total to partials[blockIdx.x] unless partials is
// null.
template <unsigned B, class T>
__global__ void scan_and_write_partials(T *out, T *partials, const T *in, std::size_t n,
                                        bool inclusive) {
  __shared__ scan::block_scan_storage<B, T> s;
  // EXERCISE BEGIN: scan this block's elements, write each one's inclusive or exclusive sum within
  // the block, and leave the block's total in partials when it is given.
  COURSE_TODO();
  // EXERCISE END
}

// Block b > 0 adds the inclusive scan of the totals of blocks 0..b-1 to each of its elements.
template <unsigned B, class T>
__global__ void scan_add_base_sums(T *out, const T *partials, std::size_t n) {
  // EXERCISE BEGIN: add the sum of every element before this block to the block's elements of out.
  COURSE_TODO();
  // EXERCISE END
}

template <unsigned B, class T>
void scan_then_fan(T *out, const T *in, std::size_t n, bool inclusive, T *scratch,
                   cudaStream_t stream) {
  if (n == 0) return;
  const std::size_t blocks = scan::ceil_div(n, B);
  if (blocks == 1) {
    scan_and_write_partials<B, T><<<1, B, 0, stream>>>(out, nullptr, in, n, inclusive);
    CUDA_CHECK_LAUNCH();
    return;
  }
  T *partials = scratch;  // this level's totals; deeper levels use what follows
  scan_and_write_partials<B><<<unsigned(blocks), B, 0, stream>>>(out, partials, in, n, inclusive);
  CUDA_CHECK_LAUNCH();
  scan_then_fan<B, T>(partials, partials, blocks, true, scratch + blocks, stream);
  scan_add_base_sums<B><<<unsigned(blocks), B, 0, stream>>>(out, partials, n);
  CUDA_CHECK_LAUNCH();
}

template <class T>
void scan_entry(T *d_out, const T *d_in, std::size_t n, bool inclusive, const scan::config &cfg,
                scan::workspace &ws, cudaStream_t stream) {
  scan::with_block_size(cfg.threads, [&](auto b) {
    constexpr unsigned B = decltype(b)::value;
    scan_then_fan<B, T>(d_out, d_in, n, inclusive, ws.partials<T>(scan::recursive_partials(n, B)),
                        stream);
  });
}

}  // namespace

SCAN_STAGE("recursive scan-then-fan (13.4.1)", scan_entry<int>, scan_entry<float>, false, nullptr,
           nullptr, 4);
