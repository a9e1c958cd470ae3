// SPDX-License-Identifier: BSD-3-Clause
// cuBLAS as a bench's baseline (11-streaming's cublasSaxpy, 15-ncc's int8 GEMM): a status check
// that throws (the bench's frame prints it and exits 1), the library's version for the report,
// and a handle that works on one stream. Header-only: only the benches that use cuBLAS link it.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace course {
namespace bench {

inline void cublas_check(cublasStatus_t s, const char *what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cuBLAS error ") + cublasGetStatusString(s) + " in " +
                             what);
}

// "13.1.0": the version of the cuBLAS the bench runs with (cublasGetProperty).
inline std::string cublas_version() {
  int major = 0, minor = 0, patch = 0;
  cublas_check(cublasGetProperty(MAJOR_VERSION, &major), "cublasGetProperty");
  cublas_check(cublasGetProperty(MINOR_VERSION, &minor), "cublasGetProperty");
  cublas_check(cublasGetProperty(PATCH_LEVEL, &patch), "cublasGetProperty");
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

// A cuBLAS handle whose calls go to `stream`.
class cublas_handle {
 public:
  explicit cublas_handle(cudaStream_t stream) {
    cublas_check(cublasCreate(&h_), "cublasCreate");
    cublas_check(cublasSetStream(h_, stream), "cublasSetStream");
  }
  ~cublas_handle() { cublasDestroy(h_); }
  cublas_handle(const cublas_handle &) = delete;
  cublas_handle &operator=(const cublas_handle &) = delete;
  cublasHandle_t get() const { return h_; }

 private:
  cublasHandle_t h_ = nullptr;
};

}  // namespace bench
}  // namespace course
