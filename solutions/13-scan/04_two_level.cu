// SPDX-License-Identifier: BSD-3-Clause
// Stage 04: two-level reduce-then-scan with a fixed number of partial sums. The CUDA Handbook
// 13.4.3 (after Merrill).
//
// Changes from stage 03: no recursion. The grid is as many blocks as the GPU holds at once (or
// config::partials), each owning one contiguous range of many tiles. Pass 1 sums each range into
// one partial; pass 2, a single block, scans those few partials; pass 3 scans each range tile by
// tile, carrying the running sum from tile to tile, starting from the partial of the ranges
// before it. Three launches whatever n is. Still 3N of global traffic, but the per-level
// launches and the small, latency-bound levels of the recursion are gone. And, as Merrill's
// kernels (and CUB) do, each thread owns four consecutive elements of a tile of 4B, read and
// written as one 16-byte vector: scanBlock then scans one sum per four elements.
// The kernels live in scan_common.cuh (stage 05 runs them on its warp-shuffle block scan).
// What to look for: in the timing, a flat curve over n once the GPU is full, and the gap to CUB
// (about 2N of traffic); in the SASS, LDG.E.128 and STG.E.128, and the tile loop around
// scanBlock's BAR.SYNCs.
#include "scan_common.cuh"

namespace {

template <class T>
void scan_entry(T *d_out, const T *d_in, std::size_t n, bool inclusive, const scan::config &cfg,
                scan::workspace &ws, cudaStream_t stream) {
  scan::with_block_size(cfg.threads, [&](auto b) {
    constexpr unsigned B = decltype(b)::value;
    // EXERCISE BEGIN: run the three passes of scan::two_level_scan (scan_common.cuh) on the
    // shared-memory scanBlock, scan::shared_block_scan; read the kernels there first.
    scan::two_level_scan<B, scan::shared_block_scan>(d_out, d_in, n, inclusive, cfg, ws, stream);
    // EXERCISE END
  });
}

}  // namespace

SCAN_STAGE(COURSE_THIS_STAGE("two-level reduce-then-scan, fixed partials (13.4.3)"), scan_entry<int>,
           scan_entry<float>, true, nullptr, nullptr, 3);
