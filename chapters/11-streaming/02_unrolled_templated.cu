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
// block size x unroll table of the benchmark (listing 11.3's shape): on the H100 +4% over stage 01
// (2847 GB/s at 32 threads x 4), the whole table within 2640-2840 GB/s past an unroll of 1.
#include "streaming_launch.cuh"

namespace {

template <int n>
__global__ void saxpy_kernel(float *out, const float *x, const float *y, std::size_t N, float alpha) {
  // EXERCISE BEGIN: each thread handles groups of n elements blockDim.x apart; the groups of a
  // block are n*blockDim.x contiguous elements, and the grid strides by n*blockDim.x*gridDim.x.
  // Load all n values of x and y into registers, then compute and store; finish the last partial
  // group with a bounds check on every element.
  COURSE_TODO();
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
