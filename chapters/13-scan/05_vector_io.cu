// SPDX-License-Identifier: BSD-3-Clause
// Stage 05: the two-level scan with four consecutive elements per thread and 16-byte loads and
// stores. The CUDA Handbook 13.4.3's passes, in the form of Merrill's kernels (and CUB).
//
// The task: stage 04 moves 3N, as the book counts, yet stays far from the copy ceiling: each thread
// issues one 4-byte load per tile and one block scan per element. Give each thread four consecutive
// elements, loaded and stored as one 16-byte vector where the arrays allow it, so each memory
// instruction carries four times the bytes and the block scan runs once per four elements. You
// write passes 1 and 3 in lesson_two_level_vec4.cuh (scan::load4, store4 and scan4 are given).
// Watch for: misaligned arrays and the end of the array (the 16-byte path only where it is safe);
// in the SASS, LDG.E.128; in the table, the speedup column.
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
