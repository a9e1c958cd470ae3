// SPDX-License-Identifier: BSD-3-Clause
// Lesson header of stage 03 (03_shared_tile): the image tile in shared memory. The CUDA Handbook
// 15.4 (listing 15.5, corrShared).
//
// load_tile: all the threads of the block copy the (tile_w + w - 1) x (tile_h + h - 1) pixels its
// outputs need, halo included, through the texture (whose clamp answers reads past the image's
// edge, as in the book), in one loop strided by the block's size so that any block shape and tile
// size work; then one __syncthreads(), because each thread reads bytes that others wrote.
// correlate_bytes: stage 02's three sums, with the image read from the tile.
// Stages 04, 05 and 06 include this header: once stage 03 passes they run the tile load (and 04
// the byte loop) written here.
// What to look for: in stage 03's SASS, the TEX loads of the tile, one BAR.SYNC, then LDS.U8 in
// the loop.
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
  const int pitch = shared_pitch(tw);
  const int rows = tile_h + th - 1, cols = tile_w + tw - 1;
  const int tid = threadIdx.y * blockDim.x + threadIdx.x, threads = blockDim.x * blockDim.y;
  for (int k = tid; k < rows * cols; k += threads) {
    const int r = k / cols, c = k % cols;
    tile[r * pitch + c] = tex2D<unsigned char>(v.tex_image, float(x0 + c), float(y0 + r));
  }
  __syncthreads();
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
  int t = 0;
  for (int j = 0; j < th; ++j) {
    for (int i = 0; i < tw; ++i) {
      const unsigned I = tile[at + i], T = c_template[t++];
      s.i += int(I);
      s.isq += Mul::mul(I, I);
      s.it += int(Mul::mul(I, T));
    }
    at += pitch;
  }
  // EXERCISE END
  return s;
}

}  // namespace ncc
