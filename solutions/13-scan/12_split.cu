// SPDX-License-Identifier: BSD-3-Clause
// Stage 12: stream split (13.1), on stage 09's single-pass compaction; diff this file against
// 09_compact_lookback.cu. A stable partition: the kept elements first, in order, then the others,
// in order, as one pass of a radix sort needs them.
//
// Changes from stage 09: an element not kept goes after all the kept ones, at its index minus the
// kept before it. Where the others begin is the total kept, which a single pass knows only at its
// last tile, so a first pass counts it (N reads more; CUB's DevicePartition::If writes the others
// backwards instead). Each warp packs both runs in shared memory before writing them out.
// What to look for: in the timing, the split table's vs_CUB column and the count pass's share; in
// the SASS, the count kernel's LDG.E.128 and warp reduction, and the split kernel's two STS paths.
#include "lesson_lookback.cuh"

namespace {

namespace lb = scan::lookback;
using scan::full_mask;

// How many elements of in[0, n) keep(P, x) holds for, added to *total (zeroed before).
template <unsigned B, scan::predicate P>
__global__ void __launch_bounds__(B)
    count_kept(const int *in, std::size_t n, bool aligned, unsigned *total) {
  unsigned c = 0;
  for (std::size_t i = 4 * (std::size_t(blockIdx.x) * B + threadIdx.x); i < n;
       i += 4 * std::size_t(gridDim.x) * B) {
    int v[4];
    scan::load4(v, in, i, n, aligned);
#pragma unroll
    for (unsigned k = 0; k < 4; ++k) c += (i + k < n && scan::keep(P, v[k])) ? 1u : 0u;
  }
#pragma unroll
  for (unsigned offset = 16; offset > 0; offset /= 2) c += __shfl_xor_sync(full_mask, c, offset);
  if (threadIdx.x % 32 == 0 && c) atomicAdd(total, c);
}

// Full: as stage 09 (every element of every tile in range and the input aligned: no bounds
// tests), for all tiles but the last. *total_kept: the count pass's result.
template <bool Full, unsigned B, scan::predicate P>
__global__ void __launch_bounds__(B)
    lookback_split(int *out, const int *in, std::size_t n, unsigned long long *status,
                   unsigned *tile_counter, unsigned tiles, unsigned epoch,
                   const unsigned *total_kept) {
  constexpr unsigned rows = lb::rows<B>;
  constexpr unsigned warp_elements = 128 * rows;
  __shared__ int packed[B / 32][warp_elements];  // each warp's kept elements, then its others
  const unsigned tile = lb::next_tile(tile_counter);
  if (tile >= tiles) return;  // only when the counter was not reset
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  int v[rows][4], count[rows], base[rows];
  lb::load_rows<Full, B>(v, in, tile, n);
  const unsigned extent = Full ? unsigned(lb::tile_elements<B>) : lb::tile_extent<B>(tile, n);
  auto in_range = [&](unsigned r, unsigned k) { return Full || lb::row_offset<B>(r) + k < extent; };
  auto kept_at = [&](unsigned r, unsigned k) { return in_range(r, k) && scan::keep(P, v[r][k]); };
#pragma unroll
  for (unsigned r = 0; r < rows; ++r) {
    count[r] = 0;
#pragma unroll
    for (unsigned k = 0; k < 4; ++k) count[r] += kept_at(r, k);
  }
  const int warp_kept = lb::scan_rows(base, count);
  // This warp's elements in range, and where its part of the tile starts in the whole input.
  const unsigned warp_first = warp * warp_elements;
  const unsigned warp_count =
      Full ? warp_elements : (extent > warp_first ? min(extent - warp_first, warp_elements) : 0u);
  const std::size_t warp_start = std::size_t(tile) * lb::tile_elements<B> + warp_first;
  int *buf = packed[warp];
  // EXERCISE BEGIN: pack this lane's elements into buf[], the warp's kept ones first in input
  // order, then its others in input order.
#pragma unroll
  for (unsigned r = 0; r < rows; ++r) {
    int rank = base[r];
#pragma unroll
    for (unsigned k = 0; k < 4; ++k) {
      if (!in_range(r, k)) continue;
      const int place = int(r * 128 + 4 * lane + k);
      if (scan::keep(P, v[r][k])) buf[rank++] = v[r][k];
      else buf[warp_kept + place - rank] = v[r][k];
    }
  }
  // EXERCISE END
  int through_tile;
  const int before = lb::warp_prefix<B>(warp_kept, status, tile, epoch, through_tile);
  __syncwarp();  // the warp's packing is done before any lane reads buf
  // EXERCISE BEGIN: copy the warp's packed elements to their places in out: the kept ones among all
  // kept, the others after every kept element.
  const std::size_t rest_start = std::size_t(*total_kept) + (warp_start - unsigned(before));
  for (unsigned i = lane; i < warp_count; i += 32) {
    const bool kept = int(i) < warp_kept;
    out[kept ? std::size_t(unsigned(before)) + i : rest_start + (i - unsigned(warp_kept))] = buf[i];
  }
  // EXERCISE END
}

std::size_t split_entry(int *d_out, const int *d_in, std::size_t n, scan::predicate p,
                        const scan::config &cfg, scan::workspace &ws, cudaStream_t stream) {
  return scan::compact_with_block_size(n, cfg, stream, [&](auto b) {
    constexpr unsigned B = decltype(b)::value;
    const std::size_t tiles = scan::ceil_div(n, lb::tile_elements<B>);
    const bool aligned = scan::aligned16(d_in);
    const std::size_t full = aligned ? n / lb::tile_elements<B> : 0;  // tiles 0 .. full-1
    unsigned long long *status = ws.tile_status(tiles);
    const unsigned epoch = ws.next_epoch();
    CUDA_CHECK(cudaMemsetAsync(ws.counter(), 0, sizeof(unsigned), stream));
    CUDA_CHECK(cudaMemsetAsync(ws.total_kept(), 0, sizeof(unsigned), stream));
    scan::dispatch_predicate(p, [&](auto pred) {
      constexpr scan::predicate P = decltype(pred)::value;
      const std::size_t count_blocks =
          std::min<std::size_t>(scan::ceil_div(n, 4 * std::size_t(B)),
                                std::size_t(course::resident_blocks(count_kept<B, P>, int(B))));
      count_kept<B, P><<<unsigned(count_blocks), B, 0, stream>>>(d_in, n, aligned, ws.total_kept());
      CUDA_CHECK_LAUNCH();
      if (full) {
        lookback_split<true, B, P><<<unsigned(full), B, 0, stream>>>(
            d_out, d_in, n, status, ws.counter(), unsigned(tiles), epoch, ws.total_kept());
        CUDA_CHECK_LAUNCH();
      }
      if (tiles > full) {
        lookback_split<false, B, P><<<unsigned(tiles - full), B, 0, stream>>>(
            d_out, d_in, n, status, ws.counter(), unsigned(tiles), epoch, ws.total_kept());
        CUDA_CHECK_LAUNCH();
      }
    });
    return static_cast<const unsigned *>(ws.total_kept());
  });
}

}  // namespace

SCAN_STAGE("stream split (stable partition), on single-pass compaction", nullptr, nullptr, false,
           nullptr, nullptr, 2, nullptr, nullptr, split_entry);
