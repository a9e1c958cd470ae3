// SPDX-License-Identifier: BSD-3-Clause
// Stage 08: single-pass stream compaction on decoupled look-back. Beyond the book: 13.6's
// compaction (stage 06) on stage 07's single pass, as CUB's DeviceSelect does it.
//
// Changes from stage 07: what is scanned is the count of kept elements, keep(x) for each of a
// lane's four, and where stage 07 stores every element, this stage stores the kept ones at their
// rank. Storing them straight from registers would leave each store instruction's 32 addresses
// scattered over the warp's output with gaps; instead each warp packs its kept elements into
// shared memory at their rank within the warp's part of the tile (before the look-back, so the
// packing overlaps its wait), then writes them out with consecutive lanes on consecutive
// addresses. Every tile but the last is full: its body is compiled a second time without bounds
// tests (lookback.cuh: on the H100 that took this stage from 0.87x to 0.93x CUB). Global traffic
// per element: one read, and one write per kept element. The last tile leaves the total kept in
// the workspace; the call copies it back and waits for it.
// What to look for: in the timing, the ratio to CUB DeviceSelect::If (goal 0.9x), throughput that
// rises as fewer elements are kept; in the SASS, the predicated STS of the packing, then the
// LDS/STG loop of the write-out.
#include "lookback.cuh"

namespace {

namespace lb = scan::lookback;

// One tile: Full (every element in range, input aligned: no bounds tests) or not (the last tile).
// P is a template argument: keep(P, x) folds to one or two instructions per element.
template <bool Full, unsigned B, scan::predicate P>
__device__ void compact_tile(int *out, const int *in, std::size_t n, bool aligned, unsigned long long *status,
                             unsigned tile, unsigned tiles, unsigned epoch, unsigned *kept, int *buf) {
  constexpr unsigned rows = lb::rows<B>;
  int v[rows][4], count[rows], base[rows];
  bool flag[rows][4];
  lb::load_rows<Full, B>(v, in, tile, n, aligned);
#pragma unroll
  for (unsigned r = 0; r < rows; ++r) {
    const std::size_t i = Full ? 0 : lb::row_index<B>(tile, r);  // only the last tile needs it
    count[r] = 0;
#pragma unroll
    for (unsigned k = 0; k < 4; ++k) {
      flag[r][k] = (Full || i + k < n) && scan::keep(P, v[r][k]);
      count[r] += flag[r][k];
    }
  }
  const int warp_kept = lb::scan_rows(base, count);
  // EXERCISE BEGIN: pack this lane's kept elements into buf[] from base[r] on (its rank in the
  // warp's part of the tile), row after row, in order.
#pragma unroll
  for (unsigned r = 0; r < rows; ++r) {
    int rank = base[r];
#pragma unroll
    for (unsigned k = 0; k < 4; ++k)
      if (flag[r][k]) buf[rank++] = v[r][k];
  }
  // EXERCISE END
  int through_tile;
  const int before = lb::warp_prefix<B>(warp_kept, status, tile, epoch, through_tile);
  __syncwarp();  // the warp's packing is done before any lane reads buf
  // EXERCISE BEGIN: the warp writes buf[0, warp_kept) to out from before (the kept elements
  // before this warp) on, lane i taking elements i, i + 32, ...
  int *to = out + before;
  for (int i = threadIdx.x % 32; i < warp_kept; i += 32) to[i] = buf[i];
  // EXERCISE END
  if (tile == tiles - 1 && threadIdx.x == 0) *kept = unsigned(through_tile);
}

template <unsigned B, scan::predicate P>
__global__ void __launch_bounds__(B) lookback_compact(int *out, const int *in, std::size_t n, bool aligned,
                                                      unsigned long long *status, unsigned *tile_counter,
                                                      unsigned tiles, unsigned epoch, unsigned *kept) {
  // Each warp's kept elements, 32 KB in all from B = 256; here, not in compact_tile, so that its
  // two instantiations share it.
  __shared__ int packed[B / 32][128 * lb::rows<B>];
  const unsigned tile = lb::next_tile(tile_counter);
  if (tile >= tiles) return;  // only when the counter was not reset
  int *buf = packed[threadIdx.x / 32];
  if (lb::full_tile<B>(tile, n, aligned))  // the same for the whole block: no divergence
    compact_tile<true, B, P>(out, in, n, aligned, status, tile, tiles, epoch, kept, buf);
  else
    compact_tile<false, B, P>(out, in, n, aligned, status, tile, tiles, epoch, kept, buf);
}

std::size_t compact_entry(int *d_out, const int *d_in, std::size_t n, scan::predicate p, const scan::config &cfg,
                          scan::workspace &ws, cudaStream_t stream) {
  return scan::compact_with_block_size(n, cfg, stream, [&](auto b) {
    constexpr unsigned B = decltype(b)::value;
    const std::size_t tiles = scan::ceil_div(n, lb::tile_elements<B>);
    unsigned long long *status = ws.tile_status(tiles);
    CUDA_CHECK(cudaMemsetAsync(ws.counter(), 0, sizeof(unsigned), stream));
    scan::dispatch_predicate(p, [&](auto pred) {
      lookback_compact<B, decltype(pred)::value><<<unsigned(tiles), B, 0, stream>>>(
          d_out, d_in, n, scan::aligned16(d_in), status, ws.counter(), unsigned(tiles), ws.next_epoch(), ws.kept());
      CUDA_CHECK_LAUNCH();
    });
    return static_cast<const unsigned *>(ws.kept());
  });
}

}  // namespace

SCAN_STAGE(COURSE_THIS_STAGE("compaction in a single pass, on decoupled look-back"), nullptr, nullptr, false, nullptr,
           compact_entry, 2);
