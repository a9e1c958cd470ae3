// SPDX-License-Identifier: BSD-3-Clause
// Stage 08 (beyond the book): __dp4a with register blocking.
//
// Your task: in stage 07 each image word a thread loads feeds four dp4a, and every output takes
// the window sums of each of its rows itself, though the outputs below it need the same rows. Let
// each thread compute R rows of stage 07's outputs at once: load every image row once, feed each
// word to every output whose window holds it, and take a row's window sums once for all the
// outputs that use them. You write the loop over the rows; the rest is stage 07's.
// Watch for: which template row an image row meets for each of the R outputs, and rows past the
// image's last one (no written output uses them, but memcheck sees them read); in the SASS, the
// IDP.4A per LDG and the registers per thread against stage 07's (make sass-diff
// A=15-ncc/07_dp4a B=exercise/15-ncc/08_register_blocked).
#include "ncc_common.cuh"
#include "dp4a.cuh"

namespace {

#ifndef NCC_DP4A_ROWS
#define NCC_DP4A_ROWS 4  // rows per thread where the grid fills the GPU; -DNCC_DP4A_ROWS=... to time others
#endif
constexpr int default_rows = NCC_DP4A_ROWS;  // output rows per thread (R), but 2 at 32x32
#ifndef NCC_DP4A_FILL_ROWS
#define NCC_DP4A_FILL_ROWS 2  // R where the grid of default_rows leaves SMs short
#endif
constexpr int fill_rows = default_rows > NCC_DP4A_FILL_ROWS ? NCC_DP4A_FILL_ROWS : default_rows;

using ncc::dp4a_bx;
using ncc::dp4a_by;

template <bool Sums, int TW, int TH, int R>
__global__ void __launch_bounds__(dp4a_bx *dp4a_by) corr_dp4a_blocked(ncc::view v, ncc::output o, const std::uint32_t *g_shift) {
  const int tw = TW ? TW : v.tw, th = TH ? TH : v.th;
  const int nw = ncc::words_per_row(tw);
  const int x0 = 4 * int(blockIdx.x * dp4a_bx + threadIdx.x), y0 = int(blockIdx.y * dp4a_by + threadIdx.y) * R;
  const int wo = v.out_w(), ho = v.out_h();
  if (x0 >= wo || y0 >= ho) return;
  unsigned acc[R][4], s1[R][4], s2[R][4];  // SumIT, SumI, SumISq of output (x0 + a, y0 + i)
#pragma unroll
  for (int i = 0; i < R; ++i)
#pragma unroll
    for (int a = 0; a < 4; ++a) acc[i][a] = s1[i][a] = s2[i][a] = 0;
  // EXERCISE BEGIN: stage 07's loop, for R rows of outputs at once: image row y0 + j (the
  // window rows of all R outputs: j = 0..th+R-2) feeds output row y0 + i wherever its template
  // row j - i exists. Load each image word once and use it for every output it feeds; take the
  // row's window sums once per shift and add them to every output whose window holds the row.
  // Rows past the image's last one feed only outputs that are not written, but must not be
  // read: clamp them.
  COURSE_TODO();
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

// What the stage keeps per problem: stage 07's shifted template, and the rows per thread chosen for
// the problem's size on its GPU, per mode (coefficients, sums), once known.
struct blocked_state {
  explicit blocked_state(const ncc::problem &p) : dp4a(p) {}
  ncc::dp4a_state dp4a;
  int rows[2] = {0, 0};
};

dim3 grid_of(const ncc::view &v, int rows) {
  return dim3(ncc::ceil_div(v.out_w(), 4 * dp4a_bx), ncc::ceil_div(v.out_h(), rows * dp4a_by));
}

// Whether a grid of `rows`-row blocks of `kernel` fills the GPU: every SM gets as many of its blocks
// at once as its registers allow, but for one at most (a wave with SMs x (blocks per SM - 1) blocks
// or more). The SM count and the blocks per SM are the GPU's, so the choice follows the device.
template <class Kernel>
bool fills_gpu(const ncc::view &v, Kernel kernel, int rows) {
  int device = 0, sms = 0, per_sm = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, dp4a_bx * dp4a_by, 0));
  const dim3 grid = grid_of(v, rows);
  return (long long)grid.x * grid.y >= (long long)sms * (per_sm - 1);
}

template <bool Sums, int TW, int TH, int R>
void launch_rows(const ncc::view &v, const ncc::output &out, const std::uint32_t *shift, cudaStream_t stream) {
  corr_dp4a_blocked<Sums, TW, TH, R><<<grid_of(v, R), dim3(dp4a_bx, dp4a_by), 0, stream>>>(v, out, shift);
}

ncc::path run(const ncc::problem &p, const ncc::output &out, cudaStream_t stream) {
  const ncc::view &v = p.v();
  blocked_state &st = p.cache<blocked_state>("08_register_blocked");
  st.dp4a.load_constant(p.id(), stream);
  const std::uint32_t *shift = st.dp4a.shift.get();
  ncc::launch_by_size(v, st.dp4a, [&](auto tw, auto th) {
    constexpr int TW = decltype(tw)::value, TH = decltype(th)::value;
    // At 32x32 the fully unrolled loop of 4 rows needs more registers than the launch bounds leave.
    constexpr int R = (TW == 32 && TH == 32 && default_rows > 2) ? 2 : default_rows;
    constexpr int F = R < fill_rows ? R : fill_rows;
    auto launch = [&](auto sums) {
      constexpr bool S = decltype(sums)::value;
      int &rows = st.rows[S ? 1 : 0];
      if (rows == 0) rows = fills_gpu(v, corr_dp4a_blocked<S, TW, TH, R>, R) ? R : F;
      if (rows == R)
        launch_rows<S, TW, TH, R>(v, out, shift, stream);
      else
        launch_rows<S, TW, TH, F>(v, out, shift, stream);
    };
    if (out.sums())
      launch(std::true_type{});
    else
      launch(std::false_type{});
  });
  CUDA_CHECK_LAUNCH();
  return ncc::path::own;
}

}  // namespace

NCC_STAGE(COURSE_THIS_STAGE("__dp4a with register blocking (beyond the book)"), run);
