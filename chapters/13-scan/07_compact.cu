// SPDX-License-Identifier: BSD-3-Clause
// Stage 07: stream compaction. The CUDA Handbook 13.6 (keeping the odd elements, listings 13.22 and
// 13.23), generalised to a predicate (scan::predicate).
//
// The task: keep the elements for which a predicate holds, in order. 13.1 gives the idea: the
// exclusive scan of the 0/1 predicates is each kept element's index in the output. Stage 05's
// passes do the rest: pass 1 counts the kept elements of each range (given: stage 05's reduction on
// the flags), pass 2 scans the counts (given), and pass 3, which you write, finds each kept
// element's place and writes it there. The call returns the number kept.
// Watch for: the last tile (elements past n are not elements); kept elements stay in input order;
// the traffic: the book's version reads the input twice and writes only what it keeps.
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
    COURSE_TODO();
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
