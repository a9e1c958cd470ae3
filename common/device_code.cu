// SPDX-License-Identifier: BSD-3-Clause
// Which code of this build the GPU present runs (common/device.h).
#include "common/device.h"

#include <cuda_runtime.h>

namespace course {
namespace {

__global__ void probe_kernel() {}

}  // namespace

// Every object of the course is compiled for the same CUDA architectures (CMAKE_CUDA_ARCHITECTURES),
// so what the driver loads for this kernel it loads for every kernel of the course.
int device_code_version() {
  cudaFuncAttributes a{};
  if (cudaFuncGetAttributes(&a, probe_kernel) != cudaSuccess) {
    cudaGetLastError();  // no GPU, or no code for it: not sticky, clear it
    return 0;
  }
  return a.ptxVersion;
}

}  // namespace course
