// SPDX-License-Identifier: BSD-3-Clause
// Stage 08: single-pass scan with decoupled look-back (Merrill and Garland, 2016), what CUB's
// DeviceScan does. Beyond the book: 13.4 takes several launches, since blocks cannot reliably wait
// for each other; tiles numbered in the order their blocks start make one pass safe.
//
// Changes from stage 06: one pass, 2N of traffic. A block takes the next tile number from a global
// counter, loads its tile with 16-byte loads, scans it in registers, learns the sum before it by
// decoupled look-back (lesson_lookback.cuh) and writes its elements once. The tiles start at the
// 16-byte boundary below the input (lesson_lookback.cuh's frame), so the loads stay 16-byte at any
// alignment, and the stores too (a shuffle brings each lane its neighbour's elements).
// What to look for: in the timing, the vs_CUB column and table; in the SASS, the ATOMG of the tile
// number, LDG.E.128 and STG.E.128, and the look-back's LD.E.64.STRONG.GPU spin with its VOTE.ALL
// and NANOSLEEP.
#include "lesson_lookback.cuh"

namespace {

namespace lb = scan::lookback;

// Blocks that must fit on an SM at once: 1024 threads, so at most 64 registers, which the kernel
// fits without spills (at B = 32, 16 blocks: the most some supported GPUs keep). Unbounded, ptxas
// takes up to 72 at some B for the frame's rarer paths, and the aligned case would pay for them
// in occupancy (3 blocks of 256 per SM instead of 4).
template <unsigned B>
constexpr unsigned min_blocks = 1024 / B < 16 ? 1024 / B : 16;

template <unsigned B, class T>
__global__ void __launch_bounds__(B, min_blocks<B>)
    lookback_scan(T *out, const T *in, std::size_t n, bool inclusive, lb::io_frame io,
                  unsigned long long *status, unsigned *tile_counter, unsigned tiles,
                  unsigned epoch) {
  const unsigned tile = lb::next_tile(tile_counter);
  if (tile >= tiles) return;  // only when the counter was not reset (the wrong variant)
  constexpr unsigned rows = lb::rows<B>;
  T v[rows][4], sum[rows], base[rows];
  lb::load_frame<B>(v, in, tile, n, io);  // 16-byte loads at any alignment of the input
#pragma unroll
  for (unsigned r = 0; r < rows; ++r) sum[r] = v[r][0] + v[r][1] + v[r][2] + v[r][3];
  const T warp_total = lb::scan_rows(base, sum);
  T through_tile;
  const T before = lb::warp_prefix<B>(warp_total, status, tile, epoch, through_tile);
  // store_frame finishes each row (the callable) just before it writes it: 16-byte stores at any
  // alignment of the output, every row's adds next to its store.
  lb::store_frame<B>(out, v, tile, n, io, [&](unsigned r, T(&row)[4]) {
    // EXERCISE BEGIN: scan this lane's row r, counting from the sum of every element before it.
    scan::scan4(row, before + base[r], inclusive);
    // EXERCISE END
  });
}

template <class T>
void scan_entry(T *d_out, const T *d_in, std::size_t n, bool inclusive, const scan::config &cfg,
                scan::workspace &ws, cudaStream_t stream) {
  scan::require_threads(cfg.threads);
  if (n == 0) return;
  scan::dispatch_threads(cfg.threads, [&](auto b) {
    constexpr unsigned B = decltype(b)::value;
    const lb::io_frame io = lb::frame_of(d_in, d_out);  // tiles from the boundary below d_in
    const std::size_t tiles = lb::frame_tiles<B>(n, io);
    if (tiles > 0xffffffffu)
      throw std::invalid_argument("too many tiles for a 32-bit tile counter");
    unsigned long long *status = ws.tile_status(tiles);
    // EXERCISE BEGIN: launch the look-back scan so that the call is right after any earlier call on
    // the same workspace.
    CUDA_CHECK(cudaMemsetAsync(ws.counter(), 0, sizeof(unsigned), stream));
    lookback_scan<B><<<unsigned(tiles), B, 0, stream>>>(
        d_out, d_in, n, inclusive, io, status, ws.counter(), unsigned(tiles), ws.next_epoch());
    CUDA_CHECK_LAUNCH();
    // EXERCISE END
  });
}

}  // namespace

SCAN_STAGE("single pass, decoupled look-back", scan_entry<int>, scan_entry<float>, false, nullptr,
           nullptr, 2);
