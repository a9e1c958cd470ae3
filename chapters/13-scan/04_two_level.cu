// SPDX-License-Identifier: BSD-3-Clause
// Stage 04: two-level reduce-then-scan with a fixed number of partial sums. The CUDA Handbook
// 13.4.3 (after Merrill; listings 13.10 .. 13.12).
//
// The task: stage 03 recurses, a few launches per level, because it has one partial per block of B
// elements. Merrill's form has only as many partials as the GPU runs blocks at once: each block
// owns a long contiguous range and walks it tile by tile, so the partials fit in one block and no
// recursion is needed. You write the three passes in lesson_two_level.cuh: reduce each range, scan
// the partials, scan each range carrying a running sum. One element per thread per tile, as in the
// book.
// Watch for: the launches per call (three, whatever n), and how far the %copy_ceiling column stays
// from 100 with one 4-byte load per thread.
#include "lesson_two_level.cuh"

namespace {

template <class T>
void scan_entry(T *d_out, const T *d_in, std::size_t n, bool inclusive, const scan::config &cfg,
                scan::workspace &ws, cudaStream_t stream) {
  scan::with_block_size(cfg.threads, [&](auto b) {
    constexpr unsigned B = decltype(b)::value;
    scan::two_level_scan<B>(d_out, d_in, n, inclusive, cfg, ws, stream);
  });
}

}  // namespace

SCAN_STAGE("two-level reduce-then-scan, fixed partials (13.4.3)", scan_entry<int>,
           scan_entry<float>, true, nullptr, nullptr, 3);
