// SPDX-License-Identifier: BSD-3-Clause
// Stage 09: the FFT method of J. P. Lewis, which 15.8 points to (beyond the book's code).
//
// Your task: the direct method costs w h multiply-adds per output, so large templates are slow.
// A correlation is a product in the frequency domain: SumIT for every offset at once from the
// transforms of the image and of the zero-padded template (cuFFT in double precision; the
// template's transform is kept per problem and given), and the window sums of the denominator
// from sliding sums (given: ncc::window_sums). You write the spectrum product, the order of the
// transforms, and the exact sums and the coefficient from the result.
// Watch for: a correlation is not a convolution; cuFFT's inverse transform is not normalised; the
// transforms' rounding error must not reach the exact sums. In the benchmark, the template size
// from which this stage is the fastest.
#include "ncc_common.cuh"

#include <cufft.h>

#include <stdexcept>
#include <string>

namespace {

void cufft_check(cufftResult r, const char *what) {
  if (r != CUFFT_SUCCESS)
    throw std::runtime_error(std::string("cuFFT error ") + std::to_string(int(r)) + " in " + what);
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
__global__ void to_real(double *dst, int fw, int fh, const std::uint8_t *src, std::size_t pitch,
                        int w, int h) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x >= fw || y >= fh) return;
  dst[std::size_t(y) * fw + x] = (x < w && y < h) ? double(src[std::size_t(y) * pitch + x]) : 0.0;
}

// F(I) * conj(F(T)) / (fw fh): the correlation's spectrum, normalised for the inverse transform.
__global__ void multiply_conj(cufftDoubleComplex *a, const cufftDoubleComplex *t, std::size_t n,
                              double scale) {
  const std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (k >= n) return;
  // EXERCISE BEGIN: bin k of the correlation's spectrum into a[k], scaled so that the inverse
  // transform gives the sums themselves.
  COURSE_TODO();
  // EXERCISE END
}

template <bool Sums>
__global__ void finish(ncc::view v, ncc::output o, const double *corr, int fw, const int *wsum_i,
                       const unsigned *wsum_isq) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x >= v.out_w() || y >= v.out_h()) return;
  const std::size_t at = std::size_t(y) * std::size_t(v.out_w()) + std::size_t(x);
  // EXERCISE BEGIN: SumIT of output (x, y), an exact integer, from the correlation; written as it
  // is (Sums) or as the coefficient.
  COURSE_TODO();
  // EXERCISE END
}

struct state {
  explicit state(const ncc::problem &p)
      : fw(fft_size(p.v().width)),
        fh(fft_size(p.v().height)),
        bins(std::size_t(fh) * std::size_t(fw / 2 + 1)),
        real(std::size_t(fw) * std::size_t(fh)),
        spectrum(bins),
        templ(bins),
        ws(p) {
    cufft_check(cufftPlan2d(&forward, fh, fw, CUFFT_D2Z), "cufftPlan2d D2Z");
    cufft_check(cufftPlan2d(&inverse, fh, fw, CUFFT_Z2D), "cufftPlan2d Z2D");
    // The template's transform, once.
    const ncc::view &v = p.v();
    to_real<<<dim3(ncc::ceil_div(fw, 256), unsigned(fh)), 256>>>(real.get(), fw, fh, v.templ,
                                                                 v.tpitch, v.tw, v.th);
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
  // EXERCISE BEGIN: the correlation of image and template for every offset, into st.real,
  // everything on `stream`.
  COURSE_TODO();
  // EXERCISE END
  const dim3 grid(ncc::ceil_div(v.out_w(), 256), unsigned(v.out_h()));
  if (out.sums())
    finish<true><<<grid, 256, 0, stream>>>(v, out, st.real.get(), st.fw, sum_i, sum_isq);
  else finish<false><<<grid, 256, 0, stream>>>(v, out, st.real.get(), st.fw, sum_i, sum_isq);
  CUDA_CHECK_LAUNCH();
  return ncc::path::own;
}

}  // namespace

NCC_STAGE("FFT correlation with window sums, J.P. Lewis (beyond the book)", run);
