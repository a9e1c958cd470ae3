// SPDX-License-Identifier: BSD-3-Clause
// Stage 02: SAXPY unrolled by a template parameter n. The CUDA Handbook 11.1, listing 11.4.
//
// Changes from stage 01: each thread loads n elements of x and of y (blockDim.x apart, so a warp
// still reads contiguous lines) before it computes and stores any. More independent loads in
// flight per thread is what hides DRAM latency; the book saw +10% on GK104 (116 -> 128 GiB/s). Because n is a
// template parameter the inner loops unroll fully and the values stay in registers; the host
// turns the run-time factor into a template argument (streaming::dispatch_unroll).
// The book's main loop bound, i < N - n*blockDim.x*gridDim.x, underflows for an unsigned N
// smaller than one sweep of the grid; this version asks instead whether the thread's whole group
// of n fits, and finishes the last partial group with a guarded pass.
// What to look for: n LDGs per array issued back to back before the first FFMA in the SASS; the
// block size x unroll table of the benchmark (listing 11.3's shape). H100, 2026-11-23: the best
// cell is 32 threads x 4 in both runs (2864 GB/s, run A 2850), 4% over stage 01's best (2752); the
// progression times that configuration at 2812 GB/s, 1.022x stage 01 (run A 2853, 1.04x). Past an
// unroll of 1 the whole table lies within 2547-2864 GB/s (run A 2644-2850), 32 threads is the best
// column in 10 of those 15 rows, and no factor spills (no LDL/STL in the SASS). Nsight Compute: a
// warp issues every 84.8 cycles instead of 131.7, DRAM goes from 82.6% to 87.2% of peak.
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
