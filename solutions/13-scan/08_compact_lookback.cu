// SPDX-License-Identifier: BSD-3-Clause
// Stage 08: single-pass stream compaction on decoupled look-back. Beyond the book: 13.6's
// compaction (stage 06) on stage 07's single pass, as CUB's DeviceSelect does it.
//
// Changes from stage 07: what is scanned is the count of kept elements, keep(x) for each of a
// lane's four, and where stage 07 stores every element, this stage stores the kept ones at their
// rank. Storing them straight from registers would leave each store instruction's 32 addresses
// scattered over a row's output with gaps; instead each warp packs a row's kept elements into
// shared memory at their rank in the row, then writes the row's run with consecutive lanes on
// consecutive addresses. Global traffic per element: one read, and one write per kept element.
// The last tile leaves the total kept in the workspace; the call copies it back and waits for it.
// What to look for: in the timing, the ratio to CUB DeviceSelect::If (goal 0.9x), throughput that
// rises as fewer elements are kept; in the SASS, STS then LDS/STG of the packed row between two
// WARPSYNCs (or NOPs where the warp is known to be converged).
#include "lookback.cuh"

namespace {

namespace lb = scan::lookback;

template <unsigned B>
__global__ void __launch_bounds__(B) lookback_compact(int *out, const int *in, std::size_t n, scan::predicate p,
                                                      bool aligned, unsigned long long *status, unsigned *tile_counter,
                                                      unsigned tiles, unsigned epoch, unsigned *kept) {
  __shared__ int packed[B / 32][128];  // one row of each warp
  const unsigned tile = lb::next_tile(tile_counter);
  if (tile >= tiles) return;  // only when the counter was not reset
  const unsigned lane = threadIdx.x % 32;
  int v[lb::rows][4], count[lb::rows], base[lb::rows];
  bool flag[lb::rows][4];
#pragma unroll
  for (unsigned r = 0; r < lb::rows; ++r) {
    const std::size_t i = lb::row_index<B>(tile, r);
    scan::load4(v[r], in, i, n, aligned);
    count[r] = 0;
#pragma unroll
    for (unsigned k = 0; k < 4; ++k) {
      flag[r][k] = i + k < n && scan::keep(p, v[r][k]);
      count[r] += flag[r][k];
    }
  }
  const int warp_total = lb::scan_rows(base, count);
  int through_tile;
  const int before = lb::warp_prefix<B>(warp_total, status, tile, epoch, through_tile);
  int *row = packed[threadIdx.x / 32];
#pragma unroll
  for (unsigned r = 0; r < lb::rows; ++r) {
    const int row_start = __shfl_sync(scan::full_mask, base[r], 0);  // kept in the warp's rows before r
    const int row_kept = __shfl_sync(scan::full_mask, base[r] + count[r], 31) - row_start;
    // EXERCISE BEGIN: pack this lane's kept elements into row[] from base[r] - row_start on, in
    // order; then (after __syncwarp) the warp writes row[0, row_kept) to out from
    // before + row_start on, lane i taking elements i, i + 32, ...; __syncwarp again before the
    // next row reuses row[].
    int rank = base[r] - row_start;
#pragma unroll
    for (unsigned k = 0; k < 4; ++k)
      if (flag[r][k]) row[rank++] = v[r][k];
    __syncwarp();
    for (int i = lane; i < row_kept; i += 32) out[std::size_t(before) + row_start + i] = row[i];
    __syncwarp();
    // EXERCISE END
  }
  if (tile == tiles - 1 && threadIdx.x == 0) *kept = unsigned(through_tile);
}

std::size_t compact_entry(int *d_out, const int *d_in, std::size_t n, scan::predicate p, const scan::config &cfg,
                          scan::workspace &ws, cudaStream_t stream) {
  scan::require_threads(cfg.threads);
  if (n == 0) return 0;
  if (n > 0x7fffffffu) throw std::invalid_argument("stage 08 counts in 32 bits: at most 2^31 - 1 elements");
  unsigned count = 0;
  scan::dispatch_threads(cfg.threads, [&](auto b) {
    constexpr unsigned B = decltype(b)::value;
    const std::size_t tiles = scan::ceil_div(n, lb::tile_elements<B>);
    unsigned long long *status = ws.tile_status(tiles);
    CUDA_CHECK(cudaMemsetAsync(ws.counter(), 0, sizeof(unsigned), stream));
    lookback_compact<B><<<unsigned(tiles), B, 0, stream>>>(d_out, d_in, n, p, scan::aligned16(d_in), status,
                                                            ws.counter(), unsigned(tiles), ws.next_epoch(), ws.kept());
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpyAsync(&count, ws.kept(), sizeof(unsigned), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
  });
  return count;
}

}  // namespace

SCAN_STAGE(COURSE_THIS_STAGE("compaction in a single pass, on decoupled look-back"), nullptr, nullptr, false, nullptr,
           compact_entry, 2);
