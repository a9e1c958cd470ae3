// SPDX-License-Identifier: BSD-3-Clause
// Stage 01's kernel, a lesson header: SAXPY as a grid-stride loop (The CUDA Handbook, chapter 11's
// introduction, listing 11.2). Taught by stage 01_grid_stride; the host stages 04-07 launch the
// same kernel (launch_saxpy) on the data they bring to the GPU.
//
// Each thread starts at its index in the grid and steps by the number of threads in the grid, so
// any grid and block size cover any n, and the 32 threads of a warp read 32 consecutive floats:
// one 128-byte line per array per step (cudaMalloc aligns to 256 bytes). The index is a size_t
// from the first product on: blockIdx.x * blockDim.x alone is a 32-bit product, and n may exceed
// 2^31.
#pragma once

#include "streaming_launch.cuh"

namespace streaming {
namespace {  // each stage file that includes this header gets its own copy

__global__ void saxpy_kernel(float *out, const float *x, const float *y, std::size_t n,
                             float alpha) {
  // EXERCISE BEGIN: out[i] = alpha * x[i] + y[i] for every i in [0, n), whatever the grid and
  // block size.
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(blockDim.x) * gridDim.x)
    out[i] = alpha * x[i] + y[i];
  // EXERCISE END
}

// out = alpha * x + y on device pointers (or the device addresses of mapped host memory), enqueued
// on `stream`, with a grid that fills the GPU (streaming::launch). n = 0 launches nothing.
inline void launch_saxpy(float *out, const float *x, const float *y, std::size_t n, float alpha,
                         const launch_config &cfg, cudaStream_t stream) {
  if (n == 0) return;
  launch(saxpy_kernel, cfg, stream, out, x, y, n, alpha);
}

}  // namespace
}  // namespace streaming
