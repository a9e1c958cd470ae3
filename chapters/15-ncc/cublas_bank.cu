// SPDX-License-Identifier: BSD-3-Clause
// The cuBLAS int8 GEMM formulation of a template bank (cublas_bank.h says why it looks this way).
#include "cublas_bank.h"

#include "ncc_common.cuh"

#include "common/check.h"
#include "harness/bench_cublas.h"

#include <stdexcept>
#include <string>
#include <vector>

namespace ncc {

using course::bench::cublas_check;

namespace {

// Word w of row m: window bytes 4w .. 4w + 3 (template pixel q = j * tw + i), minus 128; 0 past
// the window or past the last output (the padding must add nothing: the templates' is 0 too).
__global__ void im2col_kernel(view v, int m_count, int mp, int kd, std::uint32_t *a) {
  const std::size_t at = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x,
                    words = std::size_t(kd / 4);
  if (at >= std::size_t(mp) * words) return;
  const int m = int(at / words), w = int(at % words), n = v.tw * v.th;
  std::uint32_t word = 0;
  if (m < m_count) {
    const int x = m % v.out_w(), y = m / v.out_w();
    for (int b = 0; b < 4; ++b) {
      const int q = 4 * w + b;
      if (q >= n) break;
      const int j = q / v.tw, i = q % v.tw;
      const int p = int(v.image[std::size_t(y + j) * v.pitch + std::size_t(x + i)]) - 128;
      word |= std::uint32_t(std::uint8_t(std::int8_t(p))) << (8 * b);
    }
  }
  a[at] = word;
}

// SumIT = C + 128 SumI + 128 SumT - 128^2 N, then the coefficient; plane k of coef.
__global__ void bank_coefficients(view v, int k_count, int mp, const int *c, const int *sum_i,
                                  const unsigned *sum_isq, const int *sum_t, const float *denom_t,
                                  float *coef) {
  const std::size_t m_count = std::size_t(v.out_w()) * std::size_t(v.out_h());
  const std::size_t at = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  const int k = int(blockIdx.y);
  if (at >= m_count || k >= k_count) return;
  const long long sum_it = (long long)c[std::size_t(k) * std::size_t(mp) + at] + 128LL * sum_i[at] +
                           128LL * sum_t[k] - 16384LL * v.n;
  coef[std::size_t(k) * m_count + at] =
      coefficient(v.n, sum_i[at], sum_isq[at], int(sum_it), sum_t[k], denom_t[k]);
}

}  // namespace

std::string cublas_version() { return course::bench::cublas_version(); }

cublas_bank::cublas_bank(const bank_problem &b) : b_(b) {
  const view &v = b.v();
  const int K = b.count();
  m_ = int(b.outputs());
  mp_ = (m_ + 15) / 16 * 16;
  kd_ = (v.tw * v.th + 15) / 16 * 16;
  a_ = course::device_buffer<std::int8_t>(std::size_t(mp_) * std::size_t(kd_));
  t_ = course::device_buffer<std::int8_t>(std::size_t(K) * std::size_t(kd_));
  c_ = course::device_buffer<int>(std::size_t(K) * std::size_t(mp_));
  std::vector<std::int8_t> t(t_.size(), 0);
  std::vector<int> sum_t(static_cast<std::size_t>(K));
  std::vector<float> denom_t(static_cast<std::size_t>(K));
  for (int k = 0; k < K; ++k) {
    const auto &tk = b.templates()[std::size_t(k)];
    for (std::size_t q = 0; q < tk.pixels.size(); ++q)
      t[std::size_t(k) * std::size_t(kd_) + q] = std::int8_t(int(tk.pixels[q]) - 128);
    sum_t[std::size_t(k)] = int(b.stats(k).sum),
    denom_t[std::size_t(k)] = float(b.stats(k).denom());
  }
  sum_t_ = course::device_buffer<int>(sum_t.size());
  denom_t_ = course::device_buffer<float>(denom_t.size());
  CUDA_CHECK(cudaMemcpy(t_.get(), t.data(), t.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(
      cudaMemcpy(sum_t_.get(), sum_t.data(), sum_t.size() * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(denom_t_.get(), denom_t.data(), denom_t.size() * sizeof(float),
                        cudaMemcpyHostToDevice));
  rows_ = course::device_buffer<unsigned>(2 * std::size_t(v.height) * std::size_t(v.out_w()));
  sum_i_ = course::device_buffer<int>(b.outputs());
  sum_isq_ = course::device_buffer<unsigned>(b.outputs());
  cublas_check(cublasCreate(&handle_), "cublasCreate");
  CUDA_CHECK(cudaDeviceSynchronize());
}

cublas_bank::~cublas_bank() {
  if (handle_) cublasDestroy(handle_);
}

void cublas_bank::im2col(cudaStream_t stream) {
  const std::size_t words = std::size_t(mp_) * std::size_t(kd_ / 4);
  im2col_kernel<<<unsigned((words + 255) / 256), 256, 0, stream>>>(
      b_.v(), m_, mp_, kd_, reinterpret_cast<std::uint32_t *>(a_.get()));
  CUDA_CHECK_LAUNCH();
}

void cublas_bank::gemm(cudaStream_t stream) {
  // Column-major: C (mp x K, ldc mp) = op(A) (mp x kd) * B (kd x K), A stored kd x mp (lda kd:
  // a column per output, i.e. the im2col rows), B kd x K (ldb kd): the "TN" int8 GEMM.
  const int alpha = 1, beta = 0;
  cublas_check(cublasSetStream(handle_, stream), "cublasSetStream");
  cublas_check(cublasGemmEx(handle_, CUBLAS_OP_T, CUBLAS_OP_N, mp_, b_.count(), kd_, &alpha,
                            a_.get(), CUDA_R_8I, kd_, t_.get(), CUDA_R_8I, kd_, &beta, c_.get(),
                            CUDA_R_32I, mp_, CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx (int8)");
}

void cublas_bank::coefficients(float *coef, cudaStream_t stream) {
  const view &v = b_.v();
  window_sums(v, sum_i_.get(), sum_isq_.get(), rows_.get(), stream);
  bank_coefficients<<<dim3(ceil_div(m_, 256), unsigned(b_.count())), 256, 0, stream>>>(
      v, b_.count(), mp_, c_.get(), sum_i_.get(), sum_isq_.get(), sum_t_.get(), denom_t_.get(),
      coef);
  CUDA_CHECK_LAUNCH();
}

}  // namespace ncc
