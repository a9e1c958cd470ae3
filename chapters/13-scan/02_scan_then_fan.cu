// SPDX-License-Identifier: BSD-3-Clause
// Stage 02: recursive scan-then-fan. The CUDA Handbook 13.4.1 (scanBlock, scanAndWritePartials,
// scanAddBaseSums).
//
// Changes from the host scan (stage 01, host_scan.h): the work is cut into blocks of B elements.
// Each block scans its B elements with scanBlock and writes its total to a partials array; the
// partials are scanned by the same procedure (recursively, until one block is enough); then every
// block but the first adds the scanned total of the blocks before it ("fan" the base sums out).
// Global traffic per element: read + write in the first pass, read + write in the fan: 4N.
// What to look for: in the timing, about half the speed of a 2N scan at large n, and the extra
// launches of the recursion at small n; in the SASS, BAR.SYNC twice per step of scanBlock.
#include "scan_common.cuh"

namespace {

// Scans B elements per block; writes the block's total to partials[blockIdx.x] unless partials is null.
template <unsigned B, class T>
__global__ void scan_and_write_partials(T *out, T *partials, const T *in, std::size_t n, bool inclusive) {
  __shared__ T sh[B];
  const std::size_t i = blockIdx.x * std::size_t(B) + threadIdx.x;
  const T x = i < n ? in[i] : T(0);
  T total;
  const T incl = scan::scan_block<B>(sh, x, total);
  if (i < n) out[i] = inclusive ? incl : incl - x;
  if (partials && threadIdx.x == 0) partials[blockIdx.x] = total;
}

// Block b > 0 adds the inclusive scan of the totals of blocks 0..b-1 to each of its elements.
template <unsigned B, class T>
__global__ void scan_add_base_sums(T *out, const T *partials, std::size_t n) {
  // EXERCISE BEGIN: block 0 has nothing to add; block b adds partials[b - 1] (the sum of every
  // element before the block) to its elements out[b*B .. b*B + B-1] that are < n.
  COURSE_TODO();
  // EXERCISE END
}

template <unsigned B, class T>
void scan_then_fan(T *out, const T *in, std::size_t n, bool inclusive, T *scratch, cudaStream_t stream) {
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
    scan_then_fan<B, T>(d_out, d_in, n, inclusive, ws.partials<T>(scan::recursive_partials(n, B)), stream);
  });
}

}  // namespace

SCAN_STAGE(COURSE_THIS_STAGE("recursive scan-then-fan (13.4.1)"), scan_entry<int>, scan_entry<float>, false, nullptr,
           nullptr, 4);
