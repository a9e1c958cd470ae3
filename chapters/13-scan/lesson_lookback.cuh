// SPDX-License-Identifier: BSD-3-Clause
// Lesson header, taught by stage 08 (08_decoupled_lookback.cu): decoupled look-back (Merrill and
// Garland, "Single-pass Parallel Prefix Scan with Decoupled Look-back", 2016). Beyond the book:
// 13.4 says blocks cannot reliably exchange data through global memory, so a large scan takes
// several launches. Stage 09 compacts on the same machinery.
//
// Tile layout (given). A block of B threads takes a tile of B x 4 x rows elements; warp w owns the
// 128 x rows elements [w*128*rows, (w+1)*128*rows) of the tile, as rows of 128: in row r, lane l
// holds the four consecutive elements at r*128 + 4l, read with one 16-byte load, so each of the
// warp's loads covers 512 contiguous bytes: four full 128-byte lines.
//
// The task: the protocol by which a tile learns the sum of every element before it. Each tile has a
// 64-bit status word (epoch, status, value; the packing is given). A tile that knows only its own
// total can already publish it; one that knows the sum of everything up to and including itself
// publishes that, and a tile looking back can stop at the nearest such word. You write the
// look-back (one warp, 32 tiles at a time) and the order in which a tile publishes.
// Watch for: a block may wait only for tiles whose blocks are already running; a word left by an
// earlier call must not count; value and status must be read as one; and polling L2 without pause
// takes bandwidth from the loads and stores that do the work.
#pragma once

#include "scan_common.cuh"
#include "lesson_warp_block_scan.cuh"

#include <cuda/atomic>

#include <cstdint>
#include <cstring>

namespace scan::lookback {

// Rows per thread (16-byte loads): 8 (32 elements) up to 256 threads, then fewer, so that a tile
// stays at 8192 elements, the registers at B = 1024 fit, and stage 09's packing buffer in 32 KB.
// The tile size and the sleep between looks were chosen by timing the scan on the reference GPU.
template <unsigned B>
constexpr unsigned rows = B <= 256 ? 8 : 2048 / B;
constexpr unsigned spin_ns = 648;  // sleep between two looks at an incomplete window
// A tile's predecessors have rarely published their prefix by the time it has its own total: a
// warp that looks at once mostly finds an incomplete window and polls L2 while the grid's loads
// need it. One sleep before the first look (after the tile's AGGREGATE is out) took the scan of
// 256M ints from 0.98x to 1.08x CUB's time on the H100 (2026-11-27; CUB's sm_90 tuning waits the
// same 1245 ns, then 648 ns between looks). Only in a grid of first_look_tiles tiles or more: a
// smaller one is over in a few microseconds, most of which the sleep would be.
constexpr unsigned first_look_ns = 1245, first_look_tiles = 500;
template <unsigned B, unsigned Rows = rows<B>>
constexpr std::size_t tile_elements = std::size_t(B) * 4 * Rows;

// --- rows
// ------------------------------------------------------------------------------------------ Where
// this lane's four elements of row r start within the tile, and in the whole array.
template <unsigned B, unsigned Rows = rows<B>>
__device__ unsigned row_offset(unsigned r) {
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  return warp * (128 * Rows) + r * 128 + 4 * lane;
}
template <unsigned B, unsigned Rows = rows<B>>
__device__ std::size_t row_index(std::size_t tile, unsigned r) {
  return tile * tile_elements<B, Rows> + row_offset<B, Rows>(r);
}

// Full tiles. Every tile but the last has all its elements in range; when the input is also
// 16-byte aligned, such a tile needs no bounds test and no scalar fallback at all. Stage 09 runs
// them in a kernel compiled with Full = true (plain 16-byte loads at 32-bit offsets from the
// tile's start) and the last tile, or every tile of a misaligned input, in one with Full = false
// (load4's scalar path, 32-bit tests): a kernel's register count is that of its largest path, and
// a bounds test on every element is work that every full tile would pay for. Stage 08 keeps one
// kernel: it tests bounds per row of four, not per element.
// How many elements of the tile are in range (tile < number of tiles): at most a tile, 32 bits.
template <unsigned B, unsigned Rows = rows<B>>
__device__ unsigned tile_extent(unsigned tile, std::size_t n) {
  const std::size_t left = n - std::size_t(tile) * tile_elements<B, Rows>;
  return unsigned(left < tile_elements<B, Rows> ? left : tile_elements<B, Rows>);
}
template <bool Full, unsigned B, class T, unsigned Rows>
__device__ void load_rows(T (&v)[Rows][4], const T *in, unsigned tile, std::size_t n) {
  const T *tile_in = in + std::size_t(tile) * tile_elements<B, Rows>;
  const unsigned extent = Full ? 0 : tile_extent<B, Rows>(tile, n);
#pragma unroll
  for (unsigned r = 0; r < Rows; ++r) {
    if constexpr (Full) {
      const auto q =
          *reinterpret_cast<const typename vec4_of<T>::type *>(tile_in + row_offset<B, Rows>(r));
      v[r][0] = q.x, v[r][1] = q.y, v[r][2] = q.z, v[r][3] = q.w;
    } else {
      load4(v[r], tile_in, row_offset<B, Rows>(r), extent, false);
    }
  }
}

// --- tiles at any alignment (stage 08) ----------------------------------------------------------
// A 16-byte load needs a 16-byte aligned address. An input that starts `lead` elements past a
// 16-byte boundary (1..3: a sub-range, a header before the data) would put every row of every
// tile off one, and the scalar fallback issues four loads where one would do. So stage 08 numbers
// positions from the boundary below the input, its *frame*: element i sits at frame position
// i + lead, and tile t covers the positions [t*T, (t+1)*T). Every row then starts on a boundary.
// A tile whose positions all hold elements (every tile but the first, when lead > 0, and the last,
// when n + lead is not a multiple of T) is *interior*: it is read and written in whole 16-byte
// rows with no bounds test, the choice made once per tile. The other one or two tiles go element
// by element, 0 outside the array.
// The output goes through the same frame. Where it sits as far past a boundary as the input (both
// aligned, or in place), each lane stores its four at once. Otherwise its boundaries fall `shift`
// positions (1..3) before the input's: each lane's 16-byte store takes the last `shift` elements of
// the lane below (a shuffle; lane 0 gets lane 31's of the row before) and the first 4 - shift of
// its own; only the warp's first 4 - shift and last `shift` elements go one by one. Every thread
// writes only elements of its own warp's part of the tile, as the aligned path does, so in place
// stays safe.
// Rows are addressed as vectors (vec4_of<T>::type *, from the lane's row 0, row r 32 vectors on),
// never as `out + (position - lead)`: nvcc's optimiser splits a 16-byte store into four 4-byte
// ones and merges them back only where it sees four consecutive addresses, and an element index
// with a run-time `- lead` in it hides them (the stores stay STG.E, or STG.E.64 and two STG.E).
struct io_frame {
  unsigned lead = 0;   // elements between the 16-byte boundary below the input and the input
  unsigned shift = 0;  // how many positions the output's boundaries sit before the input's
};
template <class T>
io_frame frame_of(const T *in, const T *out) {
  static_assert(sizeof(T) == 4, "four elements per 16 bytes");
  const auto past = [](const T *p) {
    return unsigned(reinterpret_cast<std::uintptr_t>(p) % 16 / 4);
  };
  return {past(in), (past(out) + 4 - past(in)) % 4};
}
// How many tiles cover n elements that start `lead` positions into the frame.
template <unsigned B, unsigned Rows = rows<B>>
std::size_t frame_tiles(std::size_t n, io_frame io) {
  return (n + io.lead + tile_elements<B, Rows> - 1) / tile_elements<B, Rows>;
}

// Offset p of the tile (frame position tile*T + p) is element tile_at + p; the first tile's
// offsets below lead, and the last tile's past n, hold none.
template <unsigned B, unsigned Rows = rows<B>>
__device__ long long tile_at(unsigned tile, io_frame io) {
  return static_cast<long long>(tile) * tile_elements<B, Rows> - io.lead;
}
template <unsigned B, unsigned Rows = rows<B>>
__device__ bool interior(long long at, std::size_t n) {
  return at >= 0 && at + tile_elements<B, Rows> <= static_cast<long long>(n);
}

// The tile's rows, each from frame position row_index(tile, r): 0 outside the array.
template <unsigned B, class T, unsigned Rows>
__device__ void load_frame(T (&v)[Rows][4], const T *in, unsigned tile, std::size_t n,
                           io_frame io) {
  using vec4 = typename vec4_of<T>::type;
  const long long at = tile_at<B, Rows>(tile, io);
  if (interior<B, Rows>(at, n)) {  // in + at is on a boundary
    const vec4 *lane_in = reinterpret_cast<const vec4 *>(in + at) + row_offset<B, Rows>(0) / 4;
#pragma unroll
    for (unsigned r = 0; r < Rows; ++r) {
      const vec4 q = lane_in[32 * r];
      v[r][0] = q.x, v[r][1] = q.y, v[r][2] = q.z, v[r][3] = q.w;
    }
    return;
  }
#pragma unroll
  for (unsigned r = 0; r < Rows; ++r) {
#pragma unroll
    for (unsigned k = 0; k < 4; ++k) {
      const long long i = at + row_offset<B, Rows>(r) + k;
      v[r][k] = i >= 0 && i < static_cast<long long>(n) ? in[i] : T(0);
    }
  }
}

// An interior tile's rows to an output whose boundaries sit Shift (1..3) positions before the
// input's; tile_out is the output at the tile's offset 0. The 16-byte store of the lane at row
// offset p covers [p - Shift, p + 4 - Shift).
template <unsigned Shift, unsigned B, class T, unsigned Rows, class Finish>
__device__ void store_shifted(T *tile_out, T (&v)[Rows][4], Finish finish) {
  using vec4 = typename vec4_of<T>::type;
  const unsigned lane = threadIdx.x % 32;
  // lane_out[0] covers [p + 4 - Shift, p + 8 - Shift) for the lane's row 0 at p: row r stores
  // vector 32 r - 1.
  vec4 *lane_out = reinterpret_cast<vec4 *>(tile_out + (4 - Shift)) + row_offset<B, Rows>(0) / 4;
  T carry[Shift] = {};  // in lane 0: lane 31's last Shift elements of the row before
#pragma unroll
  for (unsigned r = 0; r < Rows; ++r) {
    finish(r, v[r]);
    T w[4];
#pragma unroll
    for (unsigned j = 0; j < Shift; ++j) {
      const T below = __shfl_sync(full_mask, v[r][4 - Shift + j], (lane + 31) % 32);
      w[j] = lane == 0 ? carry[j] : below;
      carry[j] = below;
    }
#pragma unroll
    for (unsigned k = Shift; k < 4; ++k) w[k] = v[r][k - Shift];
    if (r == 0 && lane == 0) {  // the warp's first Shift positions belong to the warp before
      const unsigned p = row_offset<B, Rows>(0);
#pragma unroll
      for (unsigned k = Shift; k < 4; ++k) tile_out[p + k - Shift] = w[k];
    } else {
      lane_out[32 * int(r) - 1] = {w[0], w[1], w[2], w[3]};
    }
  }
  if (lane == 31) {  // the warp's last Shift elements, which no 16-byte store of this warp covers
    const unsigned p = row_offset<B, Rows>(Rows - 1);
#pragma unroll
    for (unsigned k = 4 - Shift; k < 4; ++k) tile_out[p + k] = v[Rows - 1][k];
  }
}

// The tile's rows to the output, at the frame positions load_frame read them from. Each row is
// finished first (finish(r, v[r]): the stage's scan of it), so that its adds sit next to its store:
// ptxas then keeps the kernel in 64 registers, where finishing every row before the first store
// needs more.
template <unsigned B, class T, unsigned Rows, class Finish>
__device__ void store_frame(T *out, T (&v)[Rows][4], unsigned tile, std::size_t n, io_frame io,
                            Finish finish) {
  using vec4 = typename vec4_of<T>::type;
  const long long at = tile_at<B, Rows>(tile, io);
  if (!interior<B, Rows>(at, n)) {  // each lane its own elements, one by one
#pragma unroll
    for (unsigned r = 0; r < Rows; ++r) {
      finish(r, v[r]);
#pragma unroll
      for (unsigned k = 0; k < 4; ++k) {
        const long long i = at + row_offset<B, Rows>(r) + k;
        if (i >= 0 && i < static_cast<long long>(n)) out[i] = v[r][k];
      }
    }
    return;
  }
  T *tile_out = out + at;
  switch (io.shift) {  // the same for the whole grid: no divergence
    case 0: {
      vec4 *lane_out = reinterpret_cast<vec4 *>(tile_out) + row_offset<B, Rows>(0) / 4;
#pragma unroll
      for (unsigned r = 0; r < Rows; ++r) {
        finish(r, v[r]);
        lane_out[32 * r] = {v[r][0], v[r][1], v[r][2], v[r][3]};
      }
      return;
    }
    case 1: return store_shifted<1, B>(tile_out, v, finish);
    case 2: return store_shifted<2, B>(tile_out, v, finish);
    default: return store_shifted<3, B>(tile_out, v, finish);
  }
}

// Scans the warp's rows of lane sums: base[r] becomes this lane's exclusive prefix within the
// warp's part of the tile for row r. Returns the warp's total (to every lane).
template <class T, unsigned Rows>
__device__ T scan_rows(T (&base)[Rows], const T (&sum)[Rows]) {
  const unsigned lane = threadIdx.x % 32;
  T carry = 0;
#pragma unroll
  for (unsigned r = 0; r < Rows; ++r) {
    const T incl = shfl_warp_scan::inclusive(sum[r], lane);
    base[r] = carry + (incl - sum[r]);
    carry += __shfl_sync(full_mask, incl, 31);
  }
  return carry;
}

// --- status words
// ----------------------------------------------------------------------------------
constexpr unsigned status_aggregate = 1, status_prefix = 2;
using status_ref = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>;

template <class T>
__device__ unsigned long long pack(unsigned epoch, unsigned status, T value) {
  unsigned bits;
  memcpy(&bits, &value, sizeof bits);
  return (static_cast<unsigned long long>((epoch << 2) | status) << 32) | bits;
}
__device__ inline unsigned epoch_of(unsigned long long word) { return unsigned(word >> 32) >> 2; }
__device__ inline unsigned status_of(unsigned long long word) { return unsigned(word >> 32) & 3u; }
template <class T>
__device__ T value_of(unsigned long long word) {
  const unsigned bits = unsigned(word);
  T value;
  memcpy(&value, &bits, sizeof value);
  return value;
}

template <class T>
__device__ void publish(unsigned long long *status, unsigned tile, unsigned kind, T value,
                        unsigned epoch) {
  status_ref(status[tile]).store(pack(epoch, kind, value), cuda::memory_order_relaxed);
}

// One warp, all 32 lanes: the sum of the values of every tile before `tile` (tile > 0). Lane i
// watches tile window - 1 - i; the warp waits until all 32 words of its window are this call's,
// then adds the values of the lanes up to the nearest PREFIX, or of all 32 and moves 32 back.
template <class T>
__device__ T warp_look_back(unsigned long long *status, unsigned tile, unsigned epoch,
                            unsigned sleep_ns) {
  const unsigned lane = threadIdx.x % 32;
  // EXERCISE BEGIN: the sum of the values of every tile before this one, read from their status
  // words by the whole warp, 32 tiles at a time.
  COURSE_TODO();
  // EXERCISE END
}

// The tile's place in the whole input. Every thread of the block calls it with its warp's total
// (the same in all lanes); returns the sum of every element before this warp's 512, and sets
// through_tile to the sum of every element up to the end of the tile. Warp 0 publishes the tile's
// total, looks back and publishes the tile's inclusive prefix.
template <unsigned B, class T>
__device__ T warp_prefix(T warp_total, unsigned long long *status, unsigned tile, unsigned epoch,
                         T &through_tile, unsigned sleep_ns = spin_ns) {
  constexpr unsigned warps = B / 32;
  __shared__ T warp_sums[warps];
  __shared__ T inclusive_prefix;
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_sums[warp] = warp_total;
  __syncthreads();
  if (warp == 0) {
    const T own = lane < warps ? warp_sums[lane] : T(0);
    const T w = shfl_warp_scan::inclusive(own, lane);  // inclusive prefix of the warps' totals
    const T aggregate = __shfl_sync(full_mask, w, warps - 1);
    T before = 0;
    // EXERCISE BEGIN: warp 0's protocol: find before, the sum of every tile before this one,
    // publishing what successors need as early as it is known, and sleep first_look_ns before the
    // first look in a grid of first_look_tiles tiles or more.
    COURSE_TODO();
    // EXERCISE END
    __syncwarp();  // every lane has read warp_sums before any lane writes it
    if (lane < warps) warp_sums[lane] = before + (w - own);  // exclusive, from the start
    if (lane == 0) inclusive_prefix = before + aggregate;
  }
  __syncthreads();
  through_tile = inclusive_prefix;
  return warp_sums[warp];
}

// The next tile number, from the counter reset before the launch, to every thread of the block.
__device__ inline unsigned next_tile(unsigned *counter) {
  __shared__ unsigned tile;
  if (threadIdx.x == 0) tile = atomicAdd(counter, 1u);
  __syncthreads();
  return tile;
}

}  // namespace scan::lookback
