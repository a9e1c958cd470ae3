// SPDX-License-Identifier: BSD-3-Clause
// Which code of this build the GPU present runs (common/device.h).
#include "common/device.h"

#include <cuda_runtime.h>

namespace course {
namespace {

__global__ void probe_kernel() {}

// Every object of the course is compiled for the same CUDA architectures
// (CMAKE_CUDA_ARCHITECTURES), so what the driver loads for this kernel it loads for every kernel of
// the course.
cudaError_t probe(int &version) {
  cudaFuncAttributes a{};
  const cudaError_t e = cudaFuncGetAttributes(&a, probe_kernel);
  cudaGetLastError();  // no GPU, or no code for it: not sticky, clear it
  version = e == cudaSuccess ? a.ptxVersion : 0;
  return e;
}

}  // namespace

int device_code_version() {
  int version = 0;
  probe(version);
  return version;
}

std::string device_code_problem() {
  int version = 0;
  if (probe(version) != cudaErrorNoKernelImageForDevice) return "";
  int device = 0;
  cudaDeviceProp p{};
  if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&p, device) != cudaSuccess) {
    cudaGetLastError();
    return "this build has no code for the GPU present: rebuild for it (make clean, then make)";
  }
  const std::string cc = std::to_string(p.major) + std::to_string(p.minor);
  return "this build has no code for the GPU present (" + std::string(p.name) + ", sm_" + cc +
         "): rebuild for it (make clean, then make: the build picks the GPU present if this CUDA Toolkit "
         "builds for it, nvcc --list-gpu-arch; or ARCH=" +
         cc + ")";
}

}  // namespace course
