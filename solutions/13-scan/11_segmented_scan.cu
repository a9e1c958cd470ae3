// SPDX-License-Identifier: BSD-3-Clause
// Stage 11: segmented scan (13.1), on stage 08's single pass; diff this file against
// 08_decoupled_lookback.cu. Head flags (heads[i] != 0: a segment starts at i) cut the array into
// segments, each scanned on its own.
//
// Changes from stage 08: the scan is of (value, head) pairs under the segmented operator (a, fa)
// then (b, fb) = (fb ? b : a + b, fa | fb), which is associative, so every circuit of the chapter
// still scans with it. A tile that holds a head publishes its PREFIX at once, and later tiles'
// look-back stops there. Traffic: 2N ints and N flag bytes.
// What to look for: in the timing, the segmented table's vs_CUB column (InclusiveSumByKey); in the
// SASS, the second shuffle of every warp-scan step and the flags' load beside the LDG.E.128.
#include "lesson_lookback.cuh"

#include <cstdint>

namespace {

namespace lb = scan::lookback;
using scan::full_mask;

// A value of the segmented scan: a sum, and whether a segment starts inside what it sums (then
// the sum runs from the last head on).
template <class T>
struct seg {
  T value;
  bool head;
};

// The segmented operator: what `a` followed by `b` sums to. The identity is {0, false}.
template <class T>
__device__ seg<T> combine(seg<T> a, seg<T> b) {
  // EXERCISE BEGIN: the segmented operator: the pair for a's elements followed by b's.
  return b.head ? b : seg<T>{a.value + b.value, a.head};
  // EXERCISE END
}

// Kogge-Stone scan of the warp's pairs under combine (the shuffle scan of stage 06, with the
// head travelling beside the value): the inclusive pair, and the exclusive one (identity in lane
// 0).
template <class T>
__device__ seg<T> seg_shfl_up(seg<T> x, unsigned offset) {
  return {__shfl_up_sync(full_mask, x.value, offset),
          __shfl_up_sync(full_mask, int(x.head), offset) != 0};
}
template <class T>
__device__ seg<T> seg_shfl(seg<T> x, unsigned src) {
  return {__shfl_sync(full_mask, x.value, src), __shfl_sync(full_mask, int(x.head), src) != 0};
}
template <class T>
__device__ seg<T> seg_warp_inclusive(seg<T> x, unsigned lane) {
#pragma unroll
  for (unsigned offset = 1; offset < 32; offset *= 2) {
    const seg<T> y = seg_shfl_up(x, offset);
    if (lane >= offset) x = combine(y, x);
  }
  return x;
}
template <class T>
__device__ seg<T> seg_exclusive(seg<T> inclusive, unsigned lane) {
  const seg<T> y = seg_shfl_up(inclusive, 1);
  return lane ? y : seg<T>{T(0), false};
}

// Bit k: whether element i + k is a head (0 past end). The 4-byte load needs heads 4-byte aligned.
__device__ unsigned load_heads4(const std::uint8_t *heads, std::size_t i, std::size_t end,
                                bool aligned) {
  if (aligned && i + 4 <= end) {
    const uchar4 q = *reinterpret_cast<const uchar4 *>(heads + i);
    return unsigned(q.x != 0) | unsigned(q.y != 0) << 1 | unsigned(q.z != 0) << 2 |
           unsigned(q.w != 0) << 3;
  }
  unsigned bits = 0;
#pragma unroll
  for (unsigned k = 0; k < 4; ++k)
    if (i + k < end && heads[i + k]) bits |= 1u << k;
  return bits;
}

// A lane's four elements as one pair: the serial circuit under combine.
template <class T>
__device__ seg<T> fold4(const T (&v)[4], unsigned heads) {
  seg<T> s{T(0), false};
#pragma unroll
  for (unsigned k = 0; k < 4; ++k) s = combine(s, seg<T>{v[k], ((heads >> k) & 1u) != 0});
  return s;
}

// v becomes its segmented scan starting from `run` (what comes before the first element).
template <class T>
__device__ void segmented_scan4(T (&v)[4], unsigned heads, T run, bool inclusive) {
  // EXERCISE BEGIN: replace the four by their segmented scan, counting from run.
#pragma unroll
  for (unsigned k = 0; k < 4; ++k) {
    const T x = v[k];
    if ((heads >> k) & 1u) run = T(0);
    const T before_x = run;
    run += x;
    v[k] = inclusive ? run : before_x;
  }
  // EXERCISE END
}

// scan_rows (lesson_lookback.cuh) under combine: base[r] is this lane's exclusive pair within the
// warp's part of the tile for row r; returns the warp's pair.
template <class T, unsigned Rows>
__device__ seg<T> scan_rows_segmented(seg<T> (&base)[Rows], const seg<T> (&sum)[Rows]) {
  const unsigned lane = threadIdx.x % 32;
  seg<T> carry{T(0), false};
#pragma unroll
  for (unsigned r = 0; r < Rows; ++r) {
    const seg<T> incl = seg_warp_inclusive(sum[r], lane);
    base[r] = combine(carry, seg_exclusive(incl, lane));
    carry = combine(carry, seg_shfl(incl, 31));
  }
  return carry;
}

// warp_prefix (lesson_lookback.cuh) under combine: every thread calls it with its warp's pair;
// returns the segmented sum of everything before this warp's part of the tile (from the last head
// on).
template <unsigned B, class T>
__device__ T warp_prefix_segmented(seg<T> warp_total, unsigned long long *status, unsigned tile,
                                   unsigned epoch) {
  constexpr unsigned warps = B / 32;
  __shared__ T warp_sums[warps];
  __shared__ bool warp_heads[warps];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_sums[warp] = warp_total.value, warp_heads[warp] = warp_total.head;
  __syncthreads();
  if (warp == 0) {
    const seg<T> own =
        lane < warps ? seg<T>{warp_sums[lane], warp_heads[lane]} : seg<T>{T(0), false};
    const seg<T> w = seg_warp_inclusive(own, lane);
    const seg<T> excl = seg_exclusive(w, lane);
    const seg<T> aggregate = seg_shfl(w, warps - 1);  // the whole tile
    T before = 0;
    // EXERCISE BEGIN: the tile's protocol for pairs: before is what the tiles before this one carry
    // into it, and a tile that holds a head publishes its PREFIX before it looks back.
    if (tile == 0) {
      if (lane == 0) lb::publish(status, 0, lb::status_prefix, aggregate.value, epoch);
    } else if (aggregate.head) {
      if (lane == 0) lb::publish(status, tile, lb::status_prefix, aggregate.value, epoch);
      before = lb::warp_look_back<T>(status, tile, epoch, lb::spin_ns);
    } else {
      if (lane == 0) lb::publish(status, tile, lb::status_aggregate, aggregate.value, epoch);
      before = lb::warp_look_back<T>(status, tile, epoch, lb::spin_ns);
      if (lane == 0) lb::publish(status, tile, lb::status_prefix, before + aggregate.value, epoch);
    }
    // EXERCISE END
    __syncwarp();  // every lane has read warp_sums before any lane writes it
    if (lane < warps) warp_sums[lane] = combine(seg<T>{before, false}, excl).value;
  }
  __syncthreads();
  return warp_sums[warp];
}

template <unsigned B, class T>
__global__ void __launch_bounds__(B)
    segmented_scan(T *out, const T *in, const std::uint8_t *heads, std::size_t n, bool inclusive,
                   bool aligned, bool heads_aligned, unsigned long long *status,
                   unsigned *tile_counter, unsigned tiles, unsigned epoch) {
  const unsigned tile = lb::next_tile(tile_counter);
  if (tile >= tiles) return;  // only when the counter was not reset
  constexpr unsigned rows = lb::rows<B>;
  T v[rows][4];
  unsigned h[rows];
  seg<T> base[rows];
#pragma unroll
  for (unsigned r = 0; r < rows; ++r) {
    scan::load4(v[r], in, lb::row_index<B>(tile, r), n, aligned);
    h[r] = load_heads4(heads, lb::row_index<B>(tile, r), n, heads_aligned);
  }
#pragma unroll
  for (unsigned r = 0; r < rows; ++r) base[r] = fold4(v[r], h[r]);
  const seg<T> warp_total = scan_rows_segmented(base, base);
  const T before = warp_prefix_segmented<B>(warp_total, status, tile, epoch);
  // EXERCISE BEGIN: scan this lane's rows and store them, each counting from everything before it
  // back to the last head.
#pragma unroll
  for (unsigned r = 0; r < rows; ++r) {
    segmented_scan4(v[r], h[r], combine(seg<T>{before, false}, base[r]).value, inclusive);
    scan::store4(out, lb::row_index<B>(tile, r), n, v[r], aligned);
  }
  // EXERCISE END
}

void segmented_entry(int *d_out, const int *d_in, const std::uint8_t *d_heads, std::size_t n,
                     bool inclusive, const scan::config &cfg, scan::workspace &ws,
                     cudaStream_t stream) {
  scan::require_threads(cfg.threads);
  if (n == 0) return;
  scan::dispatch_threads(cfg.threads, [&](auto b) {
    constexpr unsigned B = decltype(b)::value;
    const std::size_t tiles = scan::ceil_div(n, lb::tile_elements<B>);
    if (tiles > 0xffffffffu)
      throw std::invalid_argument("too many tiles for a 32-bit tile counter");
    unsigned long long *status = ws.tile_status(tiles);
    const bool aligned = scan::aligned16(d_in) && scan::aligned16(d_out);
    const bool heads_aligned = reinterpret_cast<std::uintptr_t>(d_heads) % 4 == 0;
    CUDA_CHECK(cudaMemsetAsync(ws.counter(), 0, sizeof(unsigned), stream));
    segmented_scan<B><<<unsigned(tiles), B, 0, stream>>>(
        d_out, d_in, d_heads, n, inclusive, aligned, heads_aligned, status, ws.counter(),
        unsigned(tiles), ws.next_epoch());
    CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

SCAN_STAGE("segmented scan (head flags), on decoupled look-back", nullptr, nullptr, false, nullptr,
           nullptr, 2, nullptr, segmented_entry);
