// SPDX-License-Identifier: BSD-3-Clause
// Stage 02: SAXPY unrolled by a template parameter n. The CUDA Handbook 11.1, listing 11.4.
//
// Changes from stage 01: each thread loads n elements of x and n of y into registers (blockDim.x
// apart, so warps still read whole lines) before it computes and stores any: n times the bytes in
// flight. n is a template parameter, so the loops unroll and xs[] and ys[] stay in registers; the
// host turns the run-time factor into a template argument (streaming::dispatch_unroll). Unlike the
// book's loop bound, which wraps for a small size_t N, the last partial group is bounds-checked.
// What to look for: `make sass STAGE=11-streaming/02_unrolled_templated`: saxpy_kernel<4>'s eight
// LDG.E back to back before the first FFMA, no LDL/STL; the bench's block size x unroll table, with
// listing 11.3's shape; in the profile, fewer cycles between a warp's instructions than 01.
#include "streaming_launch.cuh"

namespace {

template <int n>
__global__ void saxpy_kernel(float *out, const float *x, const float *y, std::size_t N,
                             float alpha) {
  // EXERCISE BEGIN: out = alpha * x + y over [0, N), each thread with n elements of x and n of y
  // in flight before it uses any, and warps still reading whole lines.
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

void saxpy(float *out, const float *x, const float *y, std::size_t n, float alpha,
           const streaming::launch_config &cfg, cudaStream_t stream) {
  if (n == 0) return;
  streaming::dispatch_unroll(cfg.unroll, [&](auto unroll) {
    streaming::launch(saxpy_kernel<decltype(unroll)::value>, cfg, stream, out, x, y, n, alpha);
  });
}

}  // namespace

STREAMING_DEVICE_STAGE(saxpy, true, "unrolled by a template parameter (11.1, listing 11.4)");
