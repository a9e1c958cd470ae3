// SPDX-License-Identifier: BSD-3-Clause
// Stage 08: single-pass scan with decoupled look-back (Merrill and Garland, 2016), what CUB's
// DeviceScan does. Beyond the book: 13.4 says a scan too large for one block takes several kernel
// launches, because blocks cannot reliably exchange data through global memory.
//
// The task: stages 04 to 06 read the input twice (3N). Read it once: each block scans one tile in
// registers and learns the sum of everything before its tile from the tiles before it, which
// publish their totals in global memory as soon as they know them. You write that protocol in
// lesson_lookback.cuh; here, what the host must do before each call on a reused workspace, and what
// the kernel does with the prefix it learned. Watch for: a block may only wait for blocks that are
// already running (how are tiles numbered?); a call must not accept words left by an earlier call;
// the vs_CUB column, and the goal the bench prints. Given: the tile's loads and stores, 16-byte at
// any alignment of either array (lesson_lookback.cuh's frame).
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
    COURSE_TODO();
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
    COURSE_TODO();
    // EXERCISE END
  });
}

}  // namespace

SCAN_STAGE("single pass, decoupled look-back", scan_entry<int>, scan_entry<float>, false, nullptr,
           nullptr, 2);
