// SPDX-License-Identifier: BSD-3-Clause
// Stage 03: SAXPY on float4 vectors, unrolled by n. Beyond the book.
//
// Changes from stage 02: the unit of work is a float4: each load moves four times the bytes, so the
// same traffic takes a quarter of the memory instructions and the same unroll keeps four times the
// bytes in flight (Little's law: today's GPUs need far more than the book's GK104). The last N % 4
// floats are done one per thread; a misaligned array is refused before anything is launched.
// What to look for: LDG.E.128 and STG.E.128 where stage 02 has LDG.E and STG.E (`python3
// harness/sass.py diff 11-streaming/02_unrolled_templated 11-streaming/03_vectorized_float4
// --kernel 'saxpy_kernel<4>'`); in the profile, 512 bytes per load request instead of 128; a flat
// block size x unroll table.
#include "streaming_launch.cuh"

#include <cstdint>
#include <stdexcept>

namespace {

template <int n>
__global__ void saxpy_kernel(float *out, const float *x, const float *y, std::size_t N,
                             float alpha) {
  // EXERCISE BEGIN: stage 02's kernel moving float4 vectors, every float of [0, N) still written.
  const std::size_t N4 = N / 4;
  float4 *out4 = reinterpret_cast<float4 *>(out);
  const float4 *x4 = reinterpret_cast<const float4 *>(x);
  const float4 *y4 = reinterpret_cast<const float4 *>(y);
  const std::size_t stride = std::size_t(n) * blockDim.x * gridDim.x;
  std::size_t i = std::size_t(n) * blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + std::size_t(n - 1) * blockDim.x < N4; i += stride) {
    float4 xs[n], ys[n];
#pragma unroll
    for (int j = 0; j < n; j++) {
      xs[j] = x4[i + j * blockDim.x];
      ys[j] = y4[i + j * blockDim.x];
    }
#pragma unroll
    for (int j = 0; j < n; j++)
      out4[i + j * blockDim.x] = make_float4(alpha * xs[j].x + ys[j].x, alpha * xs[j].y + ys[j].y,
                                             alpha * xs[j].z + ys[j].z, alpha * xs[j].w + ys[j].w);
  }
#pragma unroll
  for (int j = 0; j < n; j++) {
    std::size_t index = i + j * blockDim.x;
    if (index < N4) {
      float4 a = x4[index], b = y4[index];
      out4[index] =
          make_float4(alpha * a.x + b.x, alpha * a.y + b.y, alpha * a.z + b.z, alpha * a.w + b.w);
    }
  }
  std::size_t tail = 4 * N4 + blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (tail < N) out[tail] = alpha * x[tail] + y[tail];
  // EXERCISE END
}

bool aligned16(const void *p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

void saxpy(float *out, const float *x, const float *y, std::size_t n, float alpha,
           const streaming::launch_config &cfg, cudaStream_t stream) {
  if (n == 0) return;
  // EXERCISE BEGIN: refuse, with std::invalid_argument and before anything is launched, every
  // call the float4 kernel cannot take.
  if (!aligned16(out) || !aligned16(x) || !aligned16(y))
    throw std::invalid_argument(
        "stage 03_vectorized_float4 needs 16-byte aligned arrays (float4 accesses)");
  // EXERCISE END
  streaming::dispatch_unroll(cfg.unroll, [&](auto unroll) {
    streaming::launch(saxpy_kernel<decltype(unroll)::value>, cfg, stream, out, x, y, n, alpha);
  });
}

}  // namespace

STREAMING_DEVICE_STAGE(saxpy, true, "float4 vectors, unrolled (beyond the book)");
