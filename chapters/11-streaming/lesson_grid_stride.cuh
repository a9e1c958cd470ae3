// SPDX-License-Identifier: BSD-3-Clause
// Stage 01's kernel, a lesson header: SAXPY as a grid-stride loop (The CUDA Handbook, chapter 11's
// introduction, listing 11.2). Stage 01_grid_stride is where you write it; the host stages 04-07
// launch the same kernel (launch_saxpy) on the data they bring to the GPU, so they run yours.
//
// Your task: the kernel's body. out[i] = alpha * x[i] + y[i] for every i in [0, n), whatever the
// grid and block size the caller picked (the book's word for such a kernel is block-agnostic).
// Watch for: n may exceed 2^31, and the 32 threads of a warp should read 32 consecutive floats,
// so that each warp load fills whole 128-byte lines.
#pragma once

#include "streaming_launch.cuh"

namespace streaming {
namespace {  // each stage file that includes this header gets its own copy

__global__ void saxpy_kernel(float *out, const float *x, const float *y, std::size_t n,
                             float alpha) {
  // EXERCISE BEGIN: out[i] = alpha * x[i] + y[i] for every i in [0, n), whatever the grid and
  // block size.
  COURSE_TODO();
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
