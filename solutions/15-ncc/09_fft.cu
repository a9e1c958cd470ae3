// SPDX-License-Identifier: BSD-3-Clause
// Stage 09: the FFT method of J. P. Lewis, which 15.8 points to (beyond the book's code), with
// cuFFT.
//
// Changes from stage 08: SumIT for every offset at once, in the frequency domain: IFFT(FFT(I)
// conj(FFT(T))), T zero-padded to the image's size. The cost no longer grows with the template, so
// the FFT wins past some size. SumI and SumISq come from sliding window sums (Lewis: summed-area
// tables). The transforms are double precision: SumIT reaches 2^31, where float would be off by
// several units.
// What to look for: in vs_NPP_by_template, the sizes where this stage is the fastest; in
// by_template, a time nearly the same at every size; in the profile, the cuFFT kernels and DRAM
// traffic the direct stages do not have.
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
  const cufftDoubleComplex x = a[k], y = t[k];
  a[k] = make_cuDoubleComplex((x.x * y.x + x.y * y.y) * scale, (x.y * y.x - x.x * y.y) * scale);
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
  const int sum_it = int(llrint(corr[std::size_t(y) * fw + x]));
  if (Sums) o.sum_it[at] = sum_it;
  else o.coef[at] = ncc::coefficient(v.n, wsum_i[at], wsum_isq[at], sum_it, v.sum_t, v.denom_t);
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
  to_real<<<dim3(ncc::ceil_div(st.fw, 256), unsigned(st.fh)), 256, 0, stream>>>(
      st.real.get(), st.fw, st.fh, v.image, v.pitch, v.width, v.height);
  CUDA_CHECK_LAUNCH();
  cufft_check(cufftExecD2Z(st.forward, st.real.get(), st.spectrum.get()), "cufftExecD2Z");
  multiply_conj<<<unsigned((st.bins + 255) / 256), 256, 0, stream>>>(
      st.spectrum.get(), st.templ.get(), st.bins, 1.0 / (double(st.fw) * st.fh));
  CUDA_CHECK_LAUNCH();
  cufft_check(cufftExecZ2D(st.inverse, st.spectrum.get(), st.real.get()), "cufftExecZ2D");
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
