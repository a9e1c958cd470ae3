// SPDX-License-Identifier: BSD-3-Clause
// Stage 07: stream compaction. The CUDA Handbook 13.6 (keeping the odd elements, listings 13.22 and
// 13.23), generalised to a predicate (scan::predicate).
//
// Changes from stage 05 (its passes): what is scanned is a 0/1 flag per element, keep(x), and the
// exclusive scan of the flags is where a kept element goes: out[rank] = x. Pass 1 counts the kept
// elements of each range, pass 2 scans the counts, pass 3 recomputes the flags and scatters. The
// number kept is copied back to the host. Traffic: 2N + kept.
// What to look for: in the timing, the compaction table's vs_CUB column (CUB DeviceSelect::If); in
// the SASS, the predicated STG of the scatter.
#include "lesson_two_level_vec4.cuh"

namespace {

struct keep_op {
  scan::predicate p;
  __device__ int operator()(int x) const { return scan::keep(p, x) ? 1 : 0; }
};

// Pass 3: block b walks its range tile by tile, each thread loading four elements; the kept ones go
// to out[the number of kept elements before them].
template <unsigned B>
__global__ void scatter_ranges(int *out, const int *in, const int *partials, std::size_t n,
                               std::size_t tiles_per_block, scan::predicate p, bool aligned) {
  __shared__ scan::block_scan_storage<B, int> s;
  constexpr std::size_t tile = scan::tile_elements<B>;
  const std::size_t begin = blockIdx.x * tiles_per_block * tile;
  const std::size_t end = min(n, begin + tiles_per_block * tile);
  unsigned carry = blockIdx.x ? unsigned(partials[blockIdx.x - 1]) : 0u;
  for (std::size_t first = begin; first < end; first += tile) {  // every thread runs the same trips
    const std::size_t i = first + 4 * threadIdx.x;
    int v[4];
    scan::load4(v, in, i, end, aligned);  // v[k] is element i + k (0 past end)
    // EXERCISE BEGIN: write this thread's kept elements of the tile to their places in out, in
    // order, and carry the tile's count of kept elements to the next tile.
    int flag[4], count = 0;
#pragma unroll
    for (unsigned k = 0; k < 4; ++k) {
      flag[k] = (i + k < end && scan::keep(p, v[k])) ? 1 : 0;
      count += flag[k];
    }
    int total;
    const int incl = scan::scan_block<B>(s, count, total);
    unsigned rank = carry + unsigned(incl - count);
#pragma unroll
    for (unsigned k = 0; k < 4; ++k)
      if (flag[k]) out[rank++] = v[k];
    carry += unsigned(total);
    // EXERCISE END
  }
}

std::size_t compact_entry(int *d_out, const int *d_in, std::size_t n, scan::predicate p,
                          const scan::config &cfg, scan::workspace &ws, cudaStream_t stream) {
  return scan::compact_with_block_size(n, cfg, stream, [&](auto b) {
    constexpr unsigned B = decltype(b)::value;
    using block_scan = scan::shared_block_scan;
    auto count_kernel = scan::reduce_ranges4<B, int, keep_op>;
    const bool aligned = scan::aligned16(d_in);
    const scan::two_level_plan plan =
        scan::plan_two_level(n, scan::tile_elements<B>, scan::wanted_ranges(cfg, count_kernel, B));
    int *partials = ws.partials<int>(plan.blocks);
    count_kernel<<<unsigned(plan.blocks), B, 0, stream>>>(partials, d_in, n, plan.tiles_per_block,
                                                          aligned, keep_op{p});
    CUDA_CHECK_LAUNCH();
    scan::scan_partials<B, block_scan><<<1, B, 0, stream>>>(partials, plan.blocks);
    CUDA_CHECK_LAUNCH();
    scatter_ranges<B><<<unsigned(plan.blocks), B, 0, stream>>>(d_out, d_in, partials, n,
                                                               plan.tiles_per_block, p, aligned);
    CUDA_CHECK_LAUNCH();
    return reinterpret_cast<const unsigned *>(partials + plan.blocks -
                                              1);  // the last scanned count
  });
}

}  // namespace

SCAN_STAGE("stream compaction with a predicate (13.6)", nullptr, nullptr, true, nullptr,
           compact_entry, 2);
