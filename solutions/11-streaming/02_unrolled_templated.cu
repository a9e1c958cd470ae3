// SPDX-License-Identifier: BSD-3-Clause
// Stage 02: SAXPY unrolled by a template parameter n. The CUDA Handbook 11.1, listing 11.4.
//
// Stage 01 keeps one load of x and one of y in flight per thread, and each thread waits for them
// before it can ask for more. Here each thread loads n elements of x and n of y into registers
// (blockDim.x apart, so every warp still reads whole lines) before it computes and stores any of
// them: n times the bytes in flight per thread. Because n is a template parameter the inner loops
// unroll fully and xs[] and ys[] stay in registers; the host turns the run-time factor into a
// template argument (streaming::dispatch_unroll). The book measured the idea on GK104 with
// globalCopy2 (listing 11.3): unrolling 4 times took 116 GiB/s to 128; its templated SAXPY then
// reached 135 GiB/s, where #pragma unroll on listing 11.2's loop reached about 118 (the benchmark's
// lab_pragma_unroll table repeats that comparison).
// The book's main-loop bound, i < N - n*blockDim.x*gridDim.x, wraps around for a size_t N smaller
// than one sweep of the grid, and its tail loop declares j twice. This version asks instead
// whether the thread's whole group of n fits, and finishes the last partial group with a bounds
// check on each element.
// What to look for: make sass STAGE=11-streaming/02_unrolled_templated shows saxpy_kernel<4>'s
// eight LDG.E issued back to back
// before its first FFMA, then a tail of predicated loads and stores; no unroll factor uses local
// memory (no LDL/STL). The benchmark's block size x unroll table for this stage has listing
// 11.3's shape. In the profile, a warp waits fewer cycles between its instructions than in 01.
#include "streaming_launch.cuh"

namespace {

template <int n>
__global__ void saxpy_kernel(float *out, const float *x, const float *y, std::size_t N, float alpha) {
  // EXERCISE BEGIN: each thread handles groups of n elements blockDim.x apart; the groups of a
  // block are n*blockDim.x contiguous elements, and the grid strides by n*blockDim.x*gridDim.x.
  // Load all n values of x and y into registers, then compute and store; finish the last partial
  // group with a bounds check on every element.
  const std::size_t stride = std::size_t(n) * blockDim.x * gridDim.x;
  std::size_t i = std::size_t(n) * blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + std::size_t(n - 1) * blockDim.x < N; i += stride) {
    float xs[n], ys[n];
#pragma unroll
    for (int j = 0; j < n; j++) {
      xs[j] = x[i + j * blockDim.x];
      ys[j] = y[i + j * blockDim.x];
    }
#pragma unroll
    for (int j = 0; j < n; j++) out[i + j * blockDim.x] = alpha * xs[j] + ys[j];
  }
#pragma unroll
  for (int j = 0; j < n; j++) {
    std::size_t index = i + j * blockDim.x;
    if (index < N) out[index] = alpha * x[index] + y[index];
  }
  // EXERCISE END
}

void saxpy(float *out, const float *x, const float *y, std::size_t n, float alpha, const streaming::launch_config &cfg,
           cudaStream_t stream) {
  if (n == 0) return;
  streaming::dispatch_unroll(cfg.unroll, [&](auto unroll) {
    streaming::launch(saxpy_kernel<decltype(unroll)::value>, cfg, stream, out, x, y, n, alpha);
  });
}

}  // namespace

STREAMING_DEVICE_STAGE(saxpy, true, "unrolled by a template parameter (11.1, listing 11.4)");
