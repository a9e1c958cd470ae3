// SPDX-License-Identifier: BSD-3-Clause
// Stage 05: the two-level scan with four consecutive elements per thread and 16-byte loads and
// stores. The CUDA Handbook 13.4.3's three passes, in the form of Merrill's kernels (and CUB).
//
// Changes from stage 04: each thread owns four consecutive elements of a tile of 4B, read and
// written as one 16-byte vector where both arrays are aligned. Pass 3 scans one sum of four per
// thread across the block, then each thread's four in registers. Passes 1 and 3 are in
// lesson_two_level_vec4.cuh; pass 2 is stage 04's.
// What to look for: the chapter's largest step in the speedup column, with no change in traffic; in
// the SASS, LDG.E.128 and STG.E.128, a quarter as many block scans per element as stage 04; in the
// profile, the load bytes per request.
#include "lesson_two_level_vec4.cuh"

namespace {

template <class T>
void scan_entry(T *d_out, const T *d_in, std::size_t n, bool inclusive, const scan::config &cfg,
                scan::workspace &ws, cudaStream_t stream) {
  scan::with_block_size(cfg.threads, [&](auto b) {
    constexpr unsigned B = decltype(b)::value;
    scan::two_level_scan4<B, scan::shared_block_scan>(d_out, d_in, n, inclusive, cfg, ws, stream);
  });
}

}  // namespace

SCAN_STAGE("two-level, four elements per thread, 16-byte loads (13.4.3)", scan_entry<int>,
           scan_entry<float>, true, nullptr, nullptr, 3);
