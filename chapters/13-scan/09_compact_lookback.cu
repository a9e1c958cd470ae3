// SPDX-License-Identifier: BSD-3-Clause
// Stage 09: single-pass stream compaction on decoupled look-back. Beyond the book: 13.6's
// compaction (stage 07) on stage 08's single pass, as CUB's DeviceSelect does it.
//
// The task: stage 08's tiles and look-back, scanning counts of kept elements instead of values, so
// compaction reads its input once. The look-back is given (your lesson_lookback.cuh). What is left
// is the write: a warp's kept elements land at scattered lanes, and storing each from its own
// register would leave every store instruction's addresses spread over the output with gaps. You
// write the two steps that make the warp's stores contiguous: gathering its kept elements in shared
// memory, then writing them out. Watch for: the order of the kept elements; a warp's last, partial
// group of 32; and in the SASS, what the write-out's stores look like.
#include "lesson_lookback.cuh"

namespace {

namespace lb = scan::lookback;

// Full: every element of every tile in range and the input aligned (no bounds tests, 16-byte
// loads only), for all tiles but the last; the last tile (or every tile of a misaligned input)
// goes through Full = false, in a launch of its own (compact_entry), so that the lean full-tile
// kernel's register count is its own. P is a template argument: keep(P, x) folds to one or two
// instructions per element.
template <bool Full, unsigned B, scan::predicate P>
__global__ void __launch_bounds__(B)
    lookback_compact(int *out, const int *in, std::size_t n, unsigned long long *status,
                     unsigned *tile_counter, unsigned tiles, unsigned epoch, unsigned *kept) {
  constexpr unsigned rows = lb::rows<B>;
  __shared__ int packed[B / 32]
                       [128 * rows];  // each warp's kept elements, 32 KB in all from B = 256
  const unsigned tile = lb::next_tile(tile_counter);
  if (tile >= tiles) return;  // only when the counter was not reset
  int v[rows][4], count[rows], base[rows];
  lb::load_rows<Full, B>(v, in, tile, n);
  const unsigned extent = Full ? 0 : lb::tile_extent<B>(tile, n);  // only the last tile needs it
  // Whether element k of row r is kept: evaluated twice (counting, packing) rather than held in
  // 32 flags across the row scan, which cost registers and so resident blocks.
  auto kept_at = [&](unsigned r, unsigned k) {
    return (Full || lb::row_offset<B>(r) + k < extent) && scan::keep(P, v[r][k]);
  };
#pragma unroll
  for (unsigned r = 0; r < rows; ++r) {
    count[r] = 0;
#pragma unroll
    for (unsigned k = 0; k < 4; ++k) count[r] += kept_at(r, k);
  }
  const int warp_kept = lb::scan_rows(base, count);
  int *buf = packed[threadIdx.x / 32];
  // EXERCISE BEGIN: pack the warp's kept elements into its shared buffer, contiguous and in input
  // order.
  COURSE_TODO();
  // EXERCISE END
  int through_tile;
  const int before = lb::warp_prefix<B>(warp_kept, status, tile, epoch, through_tile);
  __syncwarp();  // the warp's packing is done before any lane reads buf
  // EXERCISE BEGIN: copy the warp's packed elements to their place in out, each store instruction
  // of the warp writing consecutive addresses.
  COURSE_TODO();
  // EXERCISE END
  if (tile == tiles - 1 && threadIdx.x == 0) *kept = unsigned(through_tile);
}

std::size_t compact_entry(int *d_out, const int *d_in, std::size_t n, scan::predicate p,
                          const scan::config &cfg, scan::workspace &ws, cudaStream_t stream) {
  return scan::compact_with_block_size(n, cfg, stream, [&](auto b) {
    constexpr unsigned B = decltype(b)::value;
    const std::size_t tiles = scan::ceil_div(n, lb::tile_elements<B>);
    const std::size_t full =
        scan::aligned16(d_in) ? n / lb::tile_elements<B> : 0;  // tiles 0 .. full-1
    unsigned long long *status = ws.tile_status(tiles);
    const unsigned epoch = ws.next_epoch();
    CUDA_CHECK(cudaMemsetAsync(ws.counter(), 0, sizeof(unsigned), stream));
    scan::dispatch_predicate(p, [&](auto pred) {
      constexpr scan::predicate P = decltype(pred)::value;
      // Both launches draw their tile numbers from the same counter: the second (the last tile)
      // starts after the first has finished and finds the prefix of the tile before it at once.
      if (full) {
        lookback_compact<true, B, P><<<unsigned(full), B, 0, stream>>>(
            d_out, d_in, n, status, ws.counter(), unsigned(tiles), epoch, ws.kept());
        CUDA_CHECK_LAUNCH();
      }
      if (tiles > full) {
        lookback_compact<false, B, P><<<unsigned(tiles - full), B, 0, stream>>>(
            d_out, d_in, n, status, ws.counter(), unsigned(tiles), epoch, ws.kept());
        CUDA_CHECK_LAUNCH();
      }
    });
    return static_cast<const unsigned *>(ws.kept());
  });
}

}  // namespace

SCAN_STAGE("compaction in a single pass, on decoupled look-back", nullptr, nullptr, false, nullptr,
           compact_entry, 2);
