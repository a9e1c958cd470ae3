// SPDX-License-Identifier: BSD-3-Clause
// Lesson header of stage 05 (05_unrolled4): the loop over a template row unrolled by 4. The CUDA
// Handbook 15.5.2.
//
// Your task: correlate_words, stage 03's sums taken 4 pixels at a time, the template read as
// words from c_template4 (its layout is described above the function), then the pixels left over
// one at a time. Stage 06 includes this header and compiles your loop with the template's size
// known: write it so that it can unroll completely then. The word-padded template is given.
// Watch for: widths of 1, 5, 17 and 31 (tested), the padding bytes of a row's last word, and the
// byte order within a word.
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
  COURSE_TODO();
  // EXERCISE END
  return s;
}

}  // namespace ncc
