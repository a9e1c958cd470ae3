// SPDX-License-Identifier: BSD-3-Clause
// Stage 04: two-level reduce-then-scan with a fixed number of partial sums. The CUDA Handbook
// 13.4.3 (after Merrill; listings 13.10 .. 13.12).
//
// Changes from stage 03: no recursion. The grid is as many blocks as the GPU holds at once (or
// config::partials), each owning one contiguous range of many tiles of B. Pass 1 sums each range
// into one partial; pass 2, a single block, scans those few partials; pass 3 scans each range
// tile by tile, carrying the running sum from tile to tile, starting from the partial of the
// ranges before it. Three launches whatever n is; still 3N of global traffic, one element per
// thread per tile as in the book. You write the three passes in two_level.cuh.
// What to look for: in the timing, a flat curve over n once the GPU is full, and how far one
// 4-byte load per thread per tile stays from the copy bandwidth (on the H100, 2026-11-23: 179.3
// Gelem/s at 128 threads, 52% of the float4 copy kernel's rate, 0.59x CUB); in the SASS, the tile loop around scanBlock's three BAR.SYNC, scalar LDG.E and STG.E.
#include "two_level.cuh"

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

SCAN_STAGE(COURSE_THIS_STAGE("two-level reduce-then-scan, fixed partials (13.4.3)"), scan_entry<int>,
           scan_entry<float>, true, nullptr, nullptr, 3);
