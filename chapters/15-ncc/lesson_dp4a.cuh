// SPDX-License-Identifier: BSD-3-Clause
// Lesson header of stage 07 (07_dp4a), beyond the book: the template shifted to the image's word
// alignment, for __dp4a on packed bytes.
//
// Your task: shifted_template, the four shifted copies of the template (the layout is described
// above the function). The rest of this file is given: where the copies live, how a kernel reads
// a word of them, the byte masks of a window, the choice of a compiled-in size. Stage 08 includes
// this header: once stage 07 passes, stage 08 runs on the copies you build here.
// Watch for: the direction of the shift, and the bytes before a row's first pixel or past its
// last.
#pragma once

#include "ncc_common.cuh"

#include "common/check.h"
#include "common/memory.h"
#include "common/pgm.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>
#include <vector>

namespace ncc {
namespace {

constexpr int dp4a_bx = 32, dp4a_by = 4;  // threads per block of stages 07 and 08
constexpr int shift_words = 4096;         // 16 KB of constant memory

__constant__ std::uint32_t c_shift[shift_words];

// Words per row of a shifted template: a window starting 3 bytes into a word spans this many.
__host__ __device__ inline int words_per_row(int tw) { return (tw + 2) / 4 + 1; }

// The template shifted by a = 0..3 bytes, as words: word ((a * th + r) * nw + k), nw =
// words_per_row(tw), holds template pixels 4k - a .. 4k + 3 - a of row r, lowest byte first,
// and 0 in the bytes where that pixel index falls outside 0..tw-1. An output whose window
// starts a bytes into an aligned image word then takes its row's products as dp4a of the image
// words k = 0..nw-1 with these template words.
inline std::vector<std::uint32_t> shifted_template(const course::gray_image &t) {
  const int nw = words_per_row(t.width);
  std::vector<std::uint32_t> words(std::size_t(4) * std::size_t(t.height) * std::size_t(nw), 0);
  // EXERCISE BEGIN: fill the four shifted copies of the template, in the layout the comment above
  // describes.
  COURSE_TODO();
  // EXERCISE END
  return words;
}

// What a dp4a stage keeps per problem: the shifted template (in global memory, and in constant
// memory when it fits).
struct dp4a_state {
  explicit dp4a_state(const problem &p) {
    words = shifted_template(p.host_template());
    shift = course::device_buffer<std::uint32_t>(words.size());
    CUDA_CHECK(cudaMemcpy(shift.get(), words.data(), words.size() * sizeof(std::uint32_t),
                          cudaMemcpyHostToDevice));
    // From pageable memory cudaMemcpy may return before its DMA lands, and a kernel on a
    // non-blocking stream does not wait for the legacy stream: wait here, or the generic instance
    // (which reads these words from global memory) can read a template half copied.
    CUDA_CHECK(cudaDeviceSynchronize());
    in_constant = words.size() <= std::size_t(shift_words);
  }
  // Puts this problem's words in constant memory unless they are there already.
  void load_constant(std::uint64_t id, cudaStream_t stream) const {
    static std::uint64_t loaded = 0;
    if (!in_constant || loaded == id) return;
    CUDA_CHECK(cudaMemcpyToSymbolAsync(c_shift, words.data(), words.size() * sizeof(std::uint32_t),
                                       0, cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    loaded = id;
  }
  std::vector<std::uint32_t> words;
  course::device_buffer<std::uint32_t> shift;
  bool in_constant = false;
};

// Word `at` of the shifted template: from the constant bank in a compiled-in size (an
// instruction operand once the loops unroll), through L1 from global memory otherwise.
template <int TW>
__device__ __forceinline__ std::uint32_t template_word(const std::uint32_t *g, int at) {
  if constexpr (TW != 0) return c_shift[at];
  else return __ldg(g + at);
}

// The bytes of word k that lie in a tw-pixel window starting a bytes into word 0: 0xFF each.
__device__ __forceinline__ std::uint32_t window_mask(int a, int k, int tw) {
  std::uint32_t m = 0;
#pragma unroll
  for (int b = 0; b < 4; ++b) {
    const int i = 4 * k + b - a;
    if (i >= 0 && i < tw) m |= 0xFFu << (8 * b);
  }
  return m;
}

// Calls launch(integral_constant<TW>, integral_constant<TH>) with the square size compiled in
// (8, 12, 16, 20, 24, 28, 32: loops fully unrolled, template words in the constant bank), or 0, 0
// (the generic instance) for other sizes, for templates too large for the constant bank, and
// always while ncc::generic_at_compiled_sizes is on (the bench's flag, ncc.h).
template <class Launch>
void launch_by_size(const view &v, const dp4a_state &st, Launch &&launch) {
  bool done = false;
  auto try_size = [&](auto size) {
    constexpr int S = decltype(size)::value;
    if (!done && !generic_at_compiled_sizes && v.tw == S && v.th == S && st.in_constant)
      launch(size, size), done = true;
  };
  try_size(std::integral_constant<int, 8>{});
  try_size(std::integral_constant<int, 12>{});
  try_size(std::integral_constant<int, 16>{});
  try_size(std::integral_constant<int, 20>{});
  try_size(std::integral_constant<int, 24>{});
  try_size(std::integral_constant<int, 28>{});
  try_size(std::integral_constant<int, 32>{});
  if (!done) launch(std::integral_constant<int, 0>{}, std::integral_constant<int, 0>{});
}

}  // namespace
}  // namespace ncc
