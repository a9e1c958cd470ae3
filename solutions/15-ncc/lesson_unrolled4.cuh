// SPDX-License-Identifier: BSD-3-Clause
// Lesson header of stage 05 (05_unrolled4): the loop over a template row unrolled by 4. The CUDA
// Handbook 15.5.2 (corrShared4, corrSharedAccumulate).
//
// correlate_words: per template row, whole steps of 4 pixels, each with one template word from
// c_template4, then the w % 4 pixels left, from the row's last word. Written with #pragma unroll
// so that the loops unroll completely when w and h are compile-time constants (stage 06) and stay
// loops when they are not. The template's word-padded copy (load_template4) is given.
// Stage 06 includes this header: once stage 05 passes, stage 06 compiles the loop written here
// with the template's size known.
#pragma once

#include "ncc_common.cuh"
#include "lesson_shared_tile.cuh"

#include "common/check.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

namespace ncc {
namespace {

// The template with each row padded to a multiple of 4 bytes (zeros past w), in constant memory.
__constant__ std::uint32_t c_template4[constant_template_bytes / 4];

// Copies the padded template once per problem; false if it does not fit.
inline bool load_template4(const problem &p, cudaStream_t stream) {
  static std::uint64_t loaded = 0;
  const auto &t = p.host_template();
  const int words = (t.width + 3) / 4;
  if (std::size_t(words) * 4 * std::size_t(t.height) > std::size_t(constant_template_bytes))
    return false;
  if (loaded != p.id()) {
    std::vector<std::uint8_t> padded(std::size_t(words) * 4 * std::size_t(t.height), 0);
    for (int j = 0; j < t.height; ++j)
      for (int i = 0; i < t.width; ++i)
        padded[std::size_t(j) * words * 4 + std::size_t(i)] = t.at(i, j);
    CUDA_CHECK(cudaMemcpyToSymbolAsync(c_template4, padded.data(), padded.size(), 0,
                                       cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    loaded = p.id();
  }
  return true;
}

}  // namespace

// Stage 03's correlate_bytes, unrolled by 4: the same sums of the window whose upper left pixel is
// tile[at] (rows `pitch` bytes apart), the template read from c_template4 as words (row j from
// word j * ((tw + 3) / 4); word k holds pixels 4k..4k+3, lowest byte first); products by Mul::mul.
template <class Mul>
__device__ __forceinline__ sums3 correlate_words(const std::uint8_t *tile, int at, int pitch,
                                                 int tw, int th) {
  sums3 s;
  // EXERCISE BEGIN: the three sums for this output with the template read a 32-bit word (four
  // pixels) at a time, for any template width.
  const int words = (tw + 3) / 4, whole = tw / 4;
#pragma unroll
  for (int j = 0; j < th; ++j) {
    const std::uint32_t *trow = c_template4 + j * words;
    int k = 0;
#pragma unroll
    for (; k < whole; ++k) {
      const std::uint32_t T4 = trow[k];
      const unsigned I0 = tile[at + 4 * k], I1 = tile[at + 4 * k + 1], I2 = tile[at + 4 * k + 2],
                     I3 = tile[at + 4 * k + 3];
      s.i += int(I0 + I1 + I2 + I3);
      s.isq += Mul::mul(I0, I0) + Mul::mul(I1, I1) + Mul::mul(I2, I2) + Mul::mul(I3, I3);
      s.it += int(Mul::mul(I0, T4 & 0xFF) + Mul::mul(I1, (T4 >> 8) & 0xFF) +
                  Mul::mul(I2, (T4 >> 16) & 0xFF) + Mul::mul(I3, T4 >> 24));
    }
    const std::uint32_t T4 = k < words ? trow[k] : 0;
    for (int i = 4 * k; i < tw; ++i) {
      const unsigned I = tile[at + i], T = (T4 >> (8 * (i - 4 * k))) & 0xFF;
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
