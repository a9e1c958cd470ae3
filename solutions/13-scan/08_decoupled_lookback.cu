// SPDX-License-Identifier: BSD-3-Clause
// Stage 08: single-pass scan with decoupled look-back (Merrill and Garland, 2016), what CUB's
// DeviceScan does. Beyond the book: 13.4 says that blocks cannot reliably exchange data through
// global memory, so a scan too large for one block takes several launches (stages 02 to 06). A
// single pass is safe when tiles are numbered in the order their blocks start (an atomic counter at
// the start of the block, where chapter 12's retirement counter counts blocks at their end): a tile
// then waits only for tiles whose blocks are already running, never for one that cannot be
// scheduled until the waiter finishes.
//
// Changes from stage 06: one pass, 2N of global traffic. A block takes the next tile number from a
// global counter, loads its tile (up to 256 threads, 8192 elements: eight 16-byte loads per thread,
// each covering 512 contiguous bytes, four full 128-byte lines, for the warp), scans it in
// registers (lesson_lookback.cuh: rows, then warps), and learns the sum of every element before the tile
// by decoupled look-back: it publishes the tile's total at once, adds up the published values of
// the tiles before it, 32 at a time with one warp, until one of them carries its inclusive prefix,
// and publishes its own. Then it writes its elements, once. The look-back and its protocol are in
// lesson_lookback.cuh; here, what the host does per call and what the kernel does with the prefix.
// What to look for: in the timing, the progression table's vs_CUB column and the vs_CUB table (the
// interleaved ratio); in the SASS, the ATOMG of the tile number, LDG.E.128 and STG.E.128, and the
// look-back's LD.E.64.STRONG.GPU spin with its VOTE.ALL and NANOSLEEP.
#include "lesson_lookback.cuh"

namespace {

namespace lb = scan::lookback;

template <unsigned B, class T>
__global__ void __launch_bounds__(B) lookback_scan(T *out, const T *in, std::size_t n, bool inclusive, bool aligned,
                                                   unsigned long long *status, unsigned *tile_counter, unsigned tiles,
                                                   unsigned epoch) {
  const unsigned tile = lb::next_tile(tile_counter);
  if (tile >= tiles) return;  // only when the counter was not reset (the wrong variant)
  constexpr unsigned rows = lb::rows<B>;
  T v[rows][4], sum[rows], base[rows];
#pragma unroll
  for (unsigned r = 0; r < rows; ++r) scan::load4(v[r], in, lb::row_index<B>(tile, r), n, aligned);
#pragma unroll
  for (unsigned r = 0; r < rows; ++r) sum[r] = v[r][0] + v[r][1] + v[r][2] + v[r][3];
  const T warp_total = lb::scan_rows(base, sum);
  T through_tile;
  const T before = lb::warp_prefix<B>(warp_total, status, tile, epoch, through_tile);
  // EXERCISE BEGIN: each row's four elements start from before (all the elements before this
  // warp's part of the tile) + base[r] (this lane's place in the warp's part); scan them
  // (scan::scan4) and store them (scan::store4) at the row's index.
#pragma unroll
  for (unsigned r = 0; r < rows; ++r) {
    scan::scan4(v[r], before + base[r], inclusive);
    scan::store4(out, lb::row_index<B>(tile, r), n, v[r], aligned);
  }
  // EXERCISE END
}

template <class T>
void scan_entry(T *d_out, const T *d_in, std::size_t n, bool inclusive, const scan::config &cfg,
                scan::workspace &ws, cudaStream_t stream) {
  scan::require_threads(cfg.threads);
  if (n == 0) return;
  scan::dispatch_threads(cfg.threads, [&](auto b) {
    constexpr unsigned B = decltype(b)::value;
    const std::size_t tiles = scan::ceil_div(n, lb::tile_elements<B>);
    if (tiles > 0xffffffffu) throw std::invalid_argument("too many tiles for a 32-bit tile counter");
    unsigned long long *status = ws.tile_status(tiles);
    // EXERCISE BEGIN: one block per tile. The call may follow earlier ones on the same workspace:
    // the tile numbers must start from 0 again (ws.counter(), on the stream), and the status words
    // of earlier calls must read as stale (a new epoch, ws.next_epoch()). Choose the 16-byte path
    // only where every array it touches allows it.
    const bool aligned = scan::aligned16(d_in) && scan::aligned16(d_out);
    CUDA_CHECK(cudaMemsetAsync(ws.counter(), 0, sizeof(unsigned), stream));
    lookback_scan<B><<<unsigned(tiles), B, 0, stream>>>(d_out, d_in, n, inclusive, aligned, status, ws.counter(),
                                                         unsigned(tiles), ws.next_epoch());
    CUDA_CHECK_LAUNCH();
    // EXERCISE END
  });
}

}  // namespace

SCAN_STAGE(COURSE_THIS_STAGE("single pass, decoupled look-back"), scan_entry<int>, scan_entry<float>, false, nullptr,
           nullptr, 2);
