// SPDX-License-Identifier: BSD-3-Clause
// Lesson header of stage 03 (03_shared_tile): the image tile in shared memory. The CUDA Handbook
// 15.4 (listing 15.5, corrShared).
//
// Your task, in two functions. load_tile: the block's threads together copy into shared memory
// every image pixel that the block's outputs need, and the function returns only when all of it
// may be read. correlate_bytes: stage 02's three sums, the image read from that tile.
// Stages 04, 05 and 06 include this header: once stage 03 passes, they run what you write here.
// Watch for: the halo (a window reaches past its block's outputs), the rows' pitch, pixels past
// the image's edge, and the order between one thread's copy and another's read (racecheck, which
// make check STAGE=exercise/15-ncc/03_shared_tile runs on a GPU, sees it).
#pragma once

#include "ncc_common.cuh"

#include <cstdint>

namespace ncc {

// The three sums of one output window.
struct sums3 {
  int i = 0, it = 0;
  unsigned isq = 0;
};

// The multiply of the inner loops: the native 32-bit IMAD. Stage 04 (15.5.1) makes the multiply
// a choice per compute capability; the loops take it as a template parameter for that.
struct imad {
  static __device__ __forceinline__ unsigned mul(unsigned a, unsigned b) { return a * b; }
};

// Fills `tile` (rows shared_pitch(tw) bytes apart) with the image pixels that the block's
// tile_w x tile_h outputs need, a (tile_w + tw - 1) x (tile_h + th - 1) window whose upper left
// corner is (x0, y0), and returns when every thread of the block may read all of it. Called by
// every thread of the block. tw and th are arguments (not v.tw, v.th) so that stage 06 can pass
// compile-time constants.
__device__ __forceinline__ void load_tile(std::uint8_t *tile, const view &v, int tw, int th, int x0,
                                          int y0) {
  // EXERCISE BEGIN: copy into the shared tile every pixel that the block's windows cover, so that
  // any thread of the block can then read any of them.
  COURSE_TODO();
  // EXERCISE END
}

// The sums of the window whose upper left pixel is tile[at], rows `pitch` bytes apart, with the
// template in c_template (rows of tw bytes); both products by Mul::mul.
template <class Mul>
__device__ __forceinline__ sums3 correlate_bytes(const std::uint8_t *tile, int at, int pitch,
                                                 int tw, int th) {
  sums3 s;
  // EXERCISE BEGIN: stage 02's three sums for this output, every image pixel read from the shared
  // tile.
  COURSE_TODO();
  // EXERCISE END
  return s;
}

}  // namespace ncc
