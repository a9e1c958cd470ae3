// SPDX-License-Identifier: BSD-3-Clause
// The kernel of the host-memory stages (04-07): stage 01's grid-stride SAXPY. Those stages teach
// how data reaches the GPU; at 128M floats the kernel is 0.6 ms of their 22-223 ms on the H100
// (under 3%; 0.3% of stage 04's), so its form hardly matters, except under mapped memory, where
// it is the kernel's loads that cross PCIe.
#include "streaming_launch.cuh"

namespace streaming {
namespace {

__global__ void saxpy_kernel(float *out, const float *x, const float *y, std::size_t n, float alpha) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(blockDim.x) * gridDim.x)
    out[i] = alpha * x[i] + y[i];
}

}  // namespace

void launch_saxpy(float *out, const float *x, const float *y, std::size_t n, float alpha, const launch_config &cfg,
                  cudaStream_t stream) {
  if (n == 0) return;
  launch(saxpy_kernel, cfg, stream, out, x, y, n, alpha);
}

}  // namespace streaming
