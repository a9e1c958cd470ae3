// SPDX-License-Identifier: BSD-3-Clause
// Stage 07 (beyond the book): packed-byte arithmetic with __dp4a and register blocking.
//
// Changes from stage 06:
//  - SumIT takes four byte products per instruction: __dp4a(a, b, c) = c + the dot product of
//    the four bytes of a and b (IDP4A, SM 6.1 and later). The image is read as aligned 32-bit
//    words; the misalignment of an output's window is moved to the template instead: the host
//    keeps four copies of it, shifted by 0..3 bytes and padded with zeros to whole words.
//  - Register blocking: each thread computes a 4 x R block of outputs (4 adjacent columns, the
//    four shifts; R = 4 rows, 2 at 32x32). Each image word it loads feeds up to 4 * R dp4a, so the loads no
//    longer bound the loop: the inner loop is IDP4A and little else.
//  - SumI and SumISq do not depend on the template, so they leave the per-output loop: for each
//    image row the thread takes the row's window sums once per shift (dp4a against a byte mask
//    of ones, and of the word with itself under the mask: words wholly inside the window are the
//    same for all shifts, and the compiler computes them once) and adds them to each of its R
//    outputs whose window covers that row. (A separate two-pass window-sum kernel, which stage 08
//    uses, cost as much as this whole kernel at 16x16.)
//  - As stage 06, square templates of 8, 12, 16, 20, 24 and 32 are compiled with the size known
//    (fully unrolled, template words as constant-bank operands); other sizes read the shifted
//    template from global memory in a generic loop.
// What to look for: in the timing, several times NPP at 16x16; in the SASS of the 16x16 kernel,
// a long run of IDP4A with c[0x3][...] operands between a few LDG.E.
#include "ncc_common.cuh"

#include <type_traits>
#include <vector>

namespace {

#ifndef NCC_DP4A_ROWS
#define NCC_DP4A_ROWS 4  // tuned on the H100 (chapter README); -DNCC_DP4A_ROWS=... to try others
#endif
constexpr int default_rows = NCC_DP4A_ROWS;  // output rows per thread (R), but 2 at 32x32
constexpr int BX = 32, BY = 4;  // threads per block: a block covers 4*BX x R*BY outputs
constexpr int shift_words = 4096;  // 16 KB of constant memory

__constant__ std::uint32_t c_shift[shift_words];

// Words per row of a shifted template: a window starting 3 bytes into a word spans this many.
inline int words_per_row(int tw) { return (tw + 2) / 4 + 1; }

// The template shifted by a = 0..3 bytes, as words: word ((a * th + r) * nw + k) holds template
// pixels 4k - a .. 4k + 3 - a of row r (zero outside 0..tw-1), lowest byte first.
std::vector<std::uint32_t> shifted_template(const course::gray_image &t) {
  const int nw = words_per_row(t.width);
  std::vector<std::uint32_t> words(std::size_t(4) * std::size_t(t.height) * std::size_t(nw), 0);
  for (int a = 0; a < 4; ++a)
    for (int r = 0; r < t.height; ++r)
      for (int k = 0; k < nw; ++k) {
        std::uint32_t w = 0;
        for (int b = 0; b < 4; ++b) {
          const int i = 4 * k + b - a;
          if (i >= 0 && i < t.width) w |= std::uint32_t(t.at(i, r)) << (8 * b);
        }
        words[(std::size_t(a) * std::size_t(t.height) + std::size_t(r)) * std::size_t(nw) + std::size_t(k)] = w;
      }
  return words;
}

// What the stage keeps per problem: the shifted template (in global memory, and in constant
// memory when it fits).
struct state {
  explicit state(const ncc::problem &p) {
    words = shifted_template(p.host_template());
    shift = course::device_buffer<std::uint32_t>(words.size());
    CUDA_CHECK(cudaMemcpy(shift.get(), words.data(), words.size() * sizeof(std::uint32_t), cudaMemcpyHostToDevice));
    in_constant = words.size() <= std::size_t(shift_words);
  }
  // Puts this problem's words in constant memory unless they are there already.
  void load_constant(std::uint64_t id, cudaStream_t stream) const {
    static std::uint64_t loaded = 0;
    if (!in_constant || loaded == id) return;
    CUDA_CHECK(cudaMemcpyToSymbolAsync(c_shift, words.data(), words.size() * sizeof(std::uint32_t), 0,
                                       cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    loaded = id;
  }
  std::vector<std::uint32_t> words;
  course::device_buffer<std::uint32_t> shift;
  bool in_constant = false;
};

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

template <bool Sums, int TW, int TH, int R>
__global__ void __launch_bounds__(BX *BY) corr_dp4a(ncc::view v, ncc::output o, const std::uint32_t *g_shift) {
  const int tw = TW ? TW : v.tw, th = TH ? TH : v.th;
  const int nw = (tw + 2) / 4 + 1;
  const int x0 = 4 * int(blockIdx.x * BX + threadIdx.x), y0 = int(blockIdx.y * BY + threadIdx.y) * R;
  const int wo = v.out_w(), ho = v.out_h();
  if (x0 >= wo || y0 >= ho) return;
  unsigned acc[R][4], s1[R][4], s2[R][4];  // SumIT, SumI, SumISq of output (x0 + a, y0 + i)
#pragma unroll
  for (int i = 0; i < R; ++i)
#pragma unroll
    for (int a = 0; a < 4; ++a) acc[i][a] = s1[i][a] = s2[i][a] = 0;
  // EXERCISE BEGIN: for each image row y0 + j (j < th + R - 1; clamp to the last row: rows past
  // it only feed outputs that are not written), for each word k < nw of that row from x0 on,
  // add __dp4a(word, shifted template word, acc) into every acc[i][a] whose template row r = j - i
  // is in 0..th-1: the template word is template_word<TW>(g_shift, (a * th + r) * nw + k).
  // Per row, also the window sums h1[a], h2[a] (dp4a with window_mask(a, k, tw)), added into
  // s1[i][a], s2[i][a] for the same outputs.
#pragma unroll
  for (int j = 0; j < th + R - 1; ++j) {
    const int row = min(y0 + j, v.height - 1);
    const std::uint32_t *src = reinterpret_cast<const std::uint32_t *>(v.image + std::size_t(row) * v.pitch + x0);
    unsigned h1[4] = {0, 0, 0, 0}, h2[4] = {0, 0, 0, 0};  // this row's window sums, per shift
#pragma unroll
    for (int k = 0; k < nw; ++k) {
      const std::uint32_t w = __ldg(src + k);
#pragma unroll
      for (int a = 0; a < 4; ++a) {
        const std::uint32_t m = window_mask(a, k, tw);
        h1[a] = __dp4a(w, m & 0x01010101u, h1[a]);
        h2[a] = __dp4a(w & m, w, h2[a]);
      }
#pragma unroll
      for (int i = 0; i < R; ++i) {
        const int r = j - i;
        if (r < 0 || r >= th) continue;
#pragma unroll
        for (int a = 0; a < 4; ++a) acc[i][a] = __dp4a(w, template_word<TW>(g_shift, (a * th + r) * nw + k), acc[i][a]);
      }
    }
#pragma unroll
    for (int i = 0; i < R; ++i) {
      const int r = j - i;
      if (r < 0 || r >= th) continue;
#pragma unroll
      for (int a = 0; a < 4; ++a) s1[i][a] += h1[a], s2[i][a] += h2[a];
    }
  }
  // EXERCISE END
#pragma unroll
  for (int i = 0; i < R; ++i) {
    const int y = y0 + i;
    if (y >= ho) break;
#pragma unroll
    for (int a = 0; a < 4; ++a) {
      const int x = x0 + a;
      if (x >= wo) break;
      const std::size_t at = std::size_t(y) * std::size_t(wo) + std::size_t(x);
      if (Sums) {
        o.sum_i[at] = int(s1[i][a]);
        o.sum_isq[at] = int(s2[i][a]);
        o.sum_it[at] = int(acc[i][a]);
      } else {
        o.coef[at] = ncc::coefficient(v.n, int(s1[i][a]), s2[i][a], int(acc[i][a]), v.sum_t, v.denom_t);
      }
    }
  }
}

ncc::path run(const ncc::problem &p, const ncc::output &out, cudaStream_t stream) {
  const ncc::view &v = p.v();
  state &st = p.cache<state>("07_dp4a");
  st.load_constant(p.id(), stream);
  auto launch = [&](auto tw, auto th) {
    constexpr int TW = decltype(tw)::value, TH = decltype(th)::value;
    // Measured on the H100 (README): 4 rows per thread are best, but at 32x32 2 rows are.
    constexpr int R = (TW == 32 && TH == 32 && default_rows > 2) ? 2 : default_rows;
    const dim3 block(BX, BY), grid(ncc::ceil_div(v.out_w(), 4 * BX), ncc::ceil_div(v.out_h(), R * BY));
    if (out.sums())
      corr_dp4a<true, TW, TH, R><<<grid, block, 0, stream>>>(v, out, st.shift.get());
    else
      corr_dp4a<false, TW, TH, R><<<grid, block, 0, stream>>>(v, out, st.shift.get());
  };
  // Square sizes compiled in (fully unrolled); others, and templates too large for the
  // constant bank, run the generic instance.
  bool done = false;
  auto try_size = [&](auto size) {
    constexpr int S = decltype(size)::value;
    if (!done && v.tw == S && v.th == S && st.in_constant) launch(size, size), done = true;
  };
  try_size(std::integral_constant<int, 8>{});
  try_size(std::integral_constant<int, 12>{});
  try_size(std::integral_constant<int, 16>{});
  try_size(std::integral_constant<int, 20>{});
  try_size(std::integral_constant<int, 24>{});
  try_size(std::integral_constant<int, 32>{});
  if (!done) launch(std::integral_constant<int, 0>{}, std::integral_constant<int, 0>{});
  CUDA_CHECK_LAUNCH();
  return ncc::path::own;
}

}  // namespace

NCC_STAGE(COURSE_THIS_STAGE("packed bytes (__dp4a), register blocking (beyond the book)"), run);
