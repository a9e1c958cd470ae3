// SPDX-License-Identifier: BSD-3-Clause
// Stage 07 (beyond the book): packed-byte arithmetic with __dp4a.
//
// Your task: after stage 06 the time goes to the byte products, one IMAD each. __dp4a(a, b, c)
// adds to c the dot product of the four bytes of a and b in one instruction (SM 6.1 and later).
// To use it, both operands must hold four pixels that belong together: read the image as aligned
// 32-bit words, and move the misalignment of a window (it may start at any byte) into the
// template, which the host keeps in four copies shifted by 0..3 bytes. You write the shifted
// copies (lesson_dp4a.cuh) and the kernel's loop over the window's rows: SumIT for each shift, and
// SumI and SumISq, which do not depend on the template, with dp4a too. The four outputs' windows
// overlap in all but a few bytes: a word that lies inside all four adds the same to each output's
// SumI and SumISq, so those need not be taken four times. Watch for: pixels are unsigned bytes,
// and an edge word holds bytes outside a window; in the SASS of the 16x16 instance, which
// instruction does the products, how many, and where the template's words come from.
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
  COURSE_TODO();
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
