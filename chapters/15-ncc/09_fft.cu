// SPDX-License-Identifier: BSD-3-Clause
// Stage 09 (beyond the book): the FFT and window-sum method of J. P. Lewis ("Fast Normalized
// Cross-Correlation", 1995) for large templates, with cuFFT.
//
// Changes from stage 08: SumIT for every offset at once, as a correlation computed in the
// frequency domain: SumIT = IFFT(FFT(I) * conj(FFT(T))), T zero-padded to the image's size
// (rounded up to a size of small prime factors). The cost no longer grows with the template:
// about 2 FFTs of the image per call (the template's FFT is kept per problem) against w*h
// multiply-adds per output for the direct method, so the FFT wins past some template size,
// which the benchmark measures. The denominator needs SumI and SumISq per window: Lewis takes
// them from running sums (summed-area tables); here from sliding window sums (ncc::window_sums,
// the same running-sum idea, in two passes).
// The transforms are double precision: SumIT reaches 2^31, and float FFTs would be off by
// several units; in float64 the rounding to the nearest integer gives the exact sums.
// You write: the spectrum product, the transforms' order, and the sums and coefficient from the
// correlation.
// What to look for: in the timing, a time almost independent of the template (82 us at 8x8,
// 103 us at 96x96 on the H100), so a rate that grows with w*h and overtakes stage 08 past 32x32;
// in a profile, the cuFFT kernels, the element-wise product and the window sums.
#include "ncc_common.cuh"

#include <cufft.h>

#include <stdexcept>
#include <string>

namespace {

void cufft_check(cufftResult r, const char *what) {
  if (r != CUFFT_SUCCESS) throw std::runtime_error(std::string("cuFFT error ") + std::to_string(int(r)) + " in " + what);
}

// The smallest size >= n whose prime factors are 2, 3, 5 and 7 (the sizes cuFFT does fastest).
int fft_size(int n) {
  for (int m = n;; ++m) {
    int r = m;
    for (int f : {2, 3, 5, 7})
      while (r % f == 0) r /= f;
    if (r == 1) return m;
  }
}

// Bytes of the image (or template) into a zero-padded fh x fw array of doubles.
__global__ void to_real(double *dst, int fw, int fh, const std::uint8_t *src, std::size_t pitch, int w, int h) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x >= fw || y >= fh) return;
  dst[std::size_t(y) * fw + x] = (x < w && y < h) ? double(src[std::size_t(y) * pitch + x]) : 0.0;
}

// F(I) * conj(F(T)) / (fw fh): the correlation's spectrum, normalised for the inverse transform.
__global__ void multiply_conj(cufftDoubleComplex *a, const cufftDoubleComplex *t, std::size_t n, double scale) {
  const std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (k >= n) return;
  // EXERCISE BEGIN: bin k of the correlation's spectrum into a[k]: the image's bin times the
  // complex conjugate of the template's (a correlation, not a convolution), scaled so that the
  // inverse transform (which cuFFT leaves unnormalised) gives the sums themselves.
  COURSE_TODO();
  // EXERCISE END
}

template <bool Sums>
__global__ void finish(ncc::view v, ncc::output o, const double *corr, int fw, const int *wsum_i,
                       const unsigned *wsum_isq) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x >= v.out_w() || y >= v.out_h()) return;
  const std::size_t at = std::size_t(y) * std::size_t(v.out_w()) + std::size_t(x);
  // EXERCISE BEGIN: SumIT of output (x, y) from the correlation (rows fw doubles apart): exact
  // sums, so bring the transforms' rounding error back to the integer. Write it (Sums) or the
  // coefficient from it and the window sums.
  COURSE_TODO();
  // EXERCISE END
}

struct state {
  explicit state(const ncc::problem &p)
      : fw(fft_size(p.v().width)), fh(fft_size(p.v().height)), bins(std::size_t(fh) * std::size_t(fw / 2 + 1)),
        real(std::size_t(fw) * std::size_t(fh)), spectrum(bins), templ(bins), ws(p) {
    cufft_check(cufftPlan2d(&forward, fh, fw, CUFFT_D2Z), "cufftPlan2d D2Z");
    cufft_check(cufftPlan2d(&inverse, fh, fw, CUFFT_Z2D), "cufftPlan2d Z2D");
    // The template's transform, once.
    const ncc::view &v = p.v();
    to_real<<<dim3(ncc::ceil_div(fw, 256), unsigned(fh)), 256>>>(real.get(), fw, fh, v.templ, v.tpitch, v.tw, v.th);
    CUDA_CHECK_LAUNCH();
    cufft_check(cufftExecD2Z(forward, real.get(), templ.get()), "cufftExecD2Z (template)");
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  ~state() {
    cufftDestroy(forward);
    cufftDestroy(inverse);
  }
  state(const state &) = delete;
  state &operator=(const state &) = delete;
  int fw, fh;
  std::size_t bins;
  course::device_buffer<double> real;
  course::device_buffer<cufftDoubleComplex> spectrum, templ;
  ncc::window_workspace ws;
  cufftHandle forward = 0, inverse = 0;
};

ncc::path run(const ncc::problem &p, const ncc::output &out, cudaStream_t stream) {
  const ncc::view &v = p.v();
  state &st = p.cache<state>("09_fft");
  int *sum_i = out.sums() ? out.sum_i : st.ws.sum_i.get();
  unsigned *sum_isq = out.sums() ? reinterpret_cast<unsigned *>(out.sum_isq) : st.ws.sum_isq.get();
  ncc::window_sums(v, sum_i, sum_isq, st.ws.rows.get(), stream);
  cufft_check(cufftSetStream(st.forward, stream), "cufftSetStream");
  cufft_check(cufftSetStream(st.inverse, stream), "cufftSetStream");
  // EXERCISE BEGIN: the correlation of image and template for every offset into st.real
  // (fw x fh doubles): the image into st.real, zero-padded (to_real), its spectrum, the product
  // with the template's spectrum kept in st.templ, the inverse transform. Everything on `stream`.
  COURSE_TODO();
  // EXERCISE END
  const dim3 grid(ncc::ceil_div(v.out_w(), 256), unsigned(v.out_h()));
  if (out.sums())
    finish<true><<<grid, 256, 0, stream>>>(v, out, st.real.get(), st.fw, sum_i, sum_isq);
  else
    finish<false><<<grid, 256, 0, stream>>>(v, out, st.real.get(), st.fw, sum_i, sum_isq);
  CUDA_CHECK_LAUNCH();
  return ncc::path::own;
}

}  // namespace

NCC_STAGE(COURSE_THIS_STAGE("FFT correlation with window sums, J.P. Lewis (beyond the book)"), run);
