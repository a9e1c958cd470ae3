// SPDX-License-Identifier: BSD-3-Clause
// The cuBLAS formulation of a template bank (the benchmark's baseline for stage 10, after the
// book repository's corrBankTC): the image windows written out as an im2col matrix, one row of
// w*h bytes per output, and SumIT of all K templates as one int8 GEMM (cublasGemmEx, CUDA_R_8I x
// CUDA_R_8I -> CUDA_R_32I). cuBLAS's int8 GEMM takes signed bytes only: image and templates go in
// as p - 128, and SumIT = C + 128 SumI + 128 SumT - 128^2 N puts the offset back, exactly.
#pragma once

#include "ncc.h"

#include "common/memory.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace ncc {

// The cuBLAS this program runs with, "13.0.0" (cublasGetProperty: no handle needed).
std::string cublas_version();

class cublas_bank {
 public:
  explicit cublas_bank(const bank_problem &b);
  ~cublas_bank();
  cublas_bank(const cublas_bank &) = delete;
  cublas_bank &operator=(const cublas_bank &) = delete;

  void im2col(cudaStream_t stream);  // the windows, p - 128, into the M x Kd matrix
  void gemm(cudaStream_t stream);    // C (M x K, planes of ldc) = windows x templates
  // Window sums, SumIT from C, and the coefficients: K planes of out_w x out_h into coef.
  void coefficients(float *coef, cudaStream_t stream);
  void run(float *coef, cudaStream_t stream) {
    im2col(stream);
    gemm(stream);
    coefficients(coef, stream);
  }
  std::size_t im2col_bytes() const { return a_.bytes(); }

 private:
  const bank_problem &b_;
  int m_ = 0, mp_ = 0, kd_ = 0;  // outputs, outputs padded to 16, template pixels padded to 16
  cublasHandle_t handle_ = nullptr;
  course::device_buffer<std::int8_t> a_,
      t_;                         // im2col (mp x kd, a row per output), templates (K x kd)
  course::device_buffer<int> c_;  // K planes of mp
  course::device_buffer<int> sum_t_;
  course::device_buffer<float> denom_t_;
  course::device_buffer<unsigned> rows_;
  course::device_buffer<int> sum_i_;
  course::device_buffer<unsigned> sum_isq_;
};

}  // namespace ncc
