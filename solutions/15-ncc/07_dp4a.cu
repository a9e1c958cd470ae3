// SPDX-License-Identifier: BSD-3-Clause
// Stage 07 (beyond the book): packed-byte arithmetic with __dp4a.
//
// Changes from stage 06: SumIT takes four byte products per IDP4A. The image is read as aligned
// 32-bit words from global memory, and the window's misalignment moves to the template: four copies
// of it shifted by 0..3 bytes (lesson_dp4a.cuh), so each thread computes the four outputs that
// start in one image word. SumI and SumISq are taken by dp4a too: once for the four outputs from
// the words that lie inside all four windows, per output (under a byte mask) from the edge words.
// Square sizes 8 to 32 (step 4) are compiled in; others run a generic loop.
// What to look for: in the SASS of the 16x16 instance, IDP.4A.U8.U8 on constant-bank template words
// and one LDG per image word, where stage 06 has an IMAD per product (`make sass-count`); in the
// progression table, this row's speedup; in the profile, IMAD falling and IDP4A rising.
#include "ncc_common.cuh"
#include "lesson_dp4a.cuh"

namespace {

using ncc::dp4a_bx;
using ncc::dp4a_by;

template <bool Sums, int TW, int TH>
__global__ void __launch_bounds__(dp4a_bx *dp4a_by)
    corr_dp4a(ncc::view v, ncc::output o, const std::uint32_t *g_shift) {
  const int tw = TW ? TW : v.tw, th = TH ? TH : v.th;
  const int nw = ncc::words_per_row(tw);
  const int x0 = 4 * int(blockIdx.x * dp4a_bx + threadIdx.x),
            y0 = int(blockIdx.y * dp4a_by + threadIdx.y);
  const int wo = v.out_w(), ho = v.out_h();
  if (x0 >= wo || y0 >= ho) return;
  unsigned acc[4] = {0, 0, 0, 0}, s1[4] = {0, 0, 0, 0},
           s2[4] = {0, 0, 0, 0};  // SumIT, SumI, SumISq of (x0 + a, y0)
  // EXERCISE BEGIN: SumIT, SumI and SumISq of the four outputs that start in this thread's image
  // word, four byte products per __dp4a, and each window sum the four outputs share taken once.
  unsigned in1 = 0, in2 = 0;  // SumI, SumISq of the words that lie inside all four windows
#pragma unroll
  for (int j = 0; j < th; ++j) {
    const std::uint32_t *src =
        reinterpret_cast<const std::uint32_t *>(v.image + std::size_t(y0 + j) * v.pitch + x0);
#pragma unroll
    for (int k = 0; k < nw; ++k) {
      const std::uint32_t w = __ldg(src + k);
      // Shift a's window holds bytes a .. a + tw - 1: all of word k for every a when k >= 1 and
      // 4k + 3 < tw. Such a word adds the same to the four outputs' SumI and SumISq.
      if (k >= 1 && 4 * k + 3 < tw) {
        in1 = __dp4a(w, 0x01010101u, in1);
        in2 = __dp4a(w, w, in2);
      } else {  // an edge word: per shift, only its bytes inside that shift's window
#pragma unroll
        for (int a = 0; a < 4; ++a) {
          const std::uint32_t m = ncc::window_mask(a, k, tw);
          s1[a] = __dp4a(w, m & 0x01010101u, s1[a]);
          s2[a] = __dp4a(w & m, w, s2[a]);
        }
      }
#pragma unroll
      for (int a = 0; a < 4; ++a)
        acc[a] = __dp4a(w, ncc::template_word<TW>(g_shift, (a * th + j) * nw + k), acc[a]);
    }
  }
#pragma unroll
  for (int a = 0; a < 4; ++a) {
    s1[a] += in1;
    s2[a] += in2;
  }
  // EXERCISE END
#pragma unroll
  for (int a = 0; a < 4; ++a) {
    const int x = x0 + a;
    if (x >= wo) break;
    const std::size_t at = std::size_t(y0) * std::size_t(wo) + std::size_t(x);
    if (Sums) {
      o.sum_i[at] = int(s1[a]);
      o.sum_isq[at] = int(s2[a]);
      o.sum_it[at] = int(acc[a]);
    } else {
      o.coef[at] = ncc::coefficient(v.n, int(s1[a]), s2[a], int(acc[a]), v.sum_t, v.denom_t);
    }
  }
}

ncc::path run(const ncc::problem &p, const ncc::output &out, cudaStream_t stream) {
  const ncc::view &v = p.v();
  ncc::dp4a_state &st = p.cache<ncc::dp4a_state>("07_dp4a");
  st.load_constant(p.id(), stream);
  const dim3 block(dp4a_bx, dp4a_by),
      grid(ncc::ceil_div(v.out_w(), 4 * dp4a_bx), ncc::ceil_div(v.out_h(), dp4a_by));
  ncc::launch_by_size(v, st, [&](auto tw, auto th) {
    constexpr int TW = decltype(tw)::value, TH = decltype(th)::value;
    if (out.sums()) corr_dp4a<true, TW, TH><<<grid, block, 0, stream>>>(v, out, st.shift.get());
    else corr_dp4a<false, TW, TH><<<grid, block, 0, stream>>>(v, out, st.shift.get());
  });
  CUDA_CHECK_LAUNCH();
  return ncc::path::own;
}

}  // namespace

NCC_STAGE("packed bytes with __dp4a (beyond the book)", run);
