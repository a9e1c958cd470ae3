// SPDX-License-Identifier: BSD-3-Clause
// Stage 04: two-level reduce-then-scan with a fixed number of partial sums. The CUDA Handbook
// 13.4.3 (after Merrill; listings 13.10 to 13.12).
//
// Changes from stage 03: no recursion. As many blocks as the GPU holds at once, each owning one
// range of many tiles: pass 1 sums each range, pass 2 (one block) scans the partials, pass 3 scans
// each range tile by tile from its partial. Three launches whatever n is, still 3N of traffic. The
// passes are in lesson_two_level.cuh.
// What to look for: in the timing, the speedup over stage 03 and the distance to the copy ceiling
// (the %copy_ceiling column); in the SASS, the tile loop around scanBlock's three BAR.SYNC, with
// scalar LDG.E and STG.E.
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
