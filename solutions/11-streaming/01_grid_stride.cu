// SPDX-License-Identifier: BSD-3-Clause
// Stage 01: SAXPY with a grid-stride loop. The CUDA Handbook, chapter 11's introduction, listing 11.2.
//
// The first stage: one thread per element, in a loop that strides by the whole grid, so any grid
// and block size covers any n ("block-agnostic", which is what lets the benchmark sweep them).
// Each element costs 12 bytes of traffic (read x and y, write out) and one FFMA: the kernel is
// bound by memory bandwidth. What to look for: in the SASS, one 32-bit LDG per array and one STG
// per iteration (`make sass STAGE=11-streaming/01_grid_stride`); in the timings, how close a
// plain loop already gets to the copy ceiling (H100, 2026-11-23: 2751 GB/s at 1024 threads, 91.9%
// of a device-to-device cudaMemcpy; run A 2750 GB/s at 256 threads, 92.4%; every block size from
// 64 to 1024 gives 2747-2752 GB/s, 32 threads 2211), and how few bytes each thread keeps in flight
// (Nsight Compute, at 128 threads: DRAM at 82.6% of peak, a warp issuing every 131.7 cycles, nearly
// all of them stalled on long_scoreboard, waiting on memory).
#include "streaming_launch.cuh"

namespace {

__global__ void saxpy_kernel(float *out, const float *x, const float *y, std::size_t n, float alpha) {
  // EXERCISE BEGIN: a grid-stride loop over [0, n) computing out[i] = alpha * x[i] + y[i]. Use
  // std::size_t for i: past 2^31 elements an int index overflows.
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(blockDim.x) * gridDim.x)
    out[i] = alpha * x[i] + y[i];
  // EXERCISE END
}

void saxpy(float *out, const float *x, const float *y, std::size_t n, float alpha, const streaming::launch_config &cfg,
           cudaStream_t stream) {
  if (n == 0) return;
  streaming::launch(saxpy_kernel, cfg, stream, out, x, y, n, alpha);
}

}  // namespace

STREAMING_DEVICE_STAGE(saxpy, false, "grid-stride loop (ch. 11 introduction, listing 11.2)");
