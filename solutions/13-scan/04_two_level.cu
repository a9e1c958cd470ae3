// SPDX-License-Identifier: BSD-3-Clause
// Stage 04: two-level reduce-then-scan with a fixed number of partial sums. The CUDA Handbook
// 13.4.3 (after Merrill; listings 13.10 .. 13.12).
//
// Changes from stage 03: no recursion. The grid is as many blocks as the GPU holds at once (or
// config::partials), each owning one contiguous range of many tiles of B. Pass 1 sums each range
// into one partial; pass 2, a single block, scans those few partials; pass 3 scans each range tile
// by tile, carrying the running sum from tile to tile, starting from the partial of the ranges
// before it. Three launches whatever n is; still 3N of global traffic, one element per thread per
// tile as in the book. The passes are in lesson_two_level.cuh.
// What to look for: in the timing, the speedup over stage 03 (fewer launches, fewer instructions)
// and the distance to the copy ceiling that one 4-byte load per thread per tile leaves (the
// %copy_ceiling column); in the SASS, the tile loop around scanBlock's three BAR.SYNC, with scalar
// LDG.E and STG.E.
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

SCAN_STAGE(COURSE_THIS_STAGE("two-level reduce-then-scan, fixed partials (13.4.3)"), scan_entry<int>,
           scan_entry<float>, true, nullptr, nullptr, 3);
