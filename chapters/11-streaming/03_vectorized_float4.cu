// SPDX-License-Identifier: BSD-3-Clause
// Stage 03: SAXPY on float4 vectors, unrolled by n. Beyond the book.
//
// Stage 02 put more bytes in flight by issuing more 4-byte loads. A wider load moves more bytes
// per instruction: one float4 is 16 bytes. The bytes a memory system needs in flight are its
// bandwidth times its latency (Little's law), far more on today's GPUs than on the book's GK104.
// Your task, in two regions: stage 02's kernel with float4 as the unit of work (the whole float4
// vectors of the arrays, then the floats left over); and the host's guard, since a float4 access
// needs an address that is a multiple of 16 bytes and the caller may pass any float pointer.
// Watch for: N not a multiple of 4; each array misaligned on its own (the tests try each one); a
// refusal must come before anything is launched. Then look for 128-bit loads and stores:
// make sass-diff A=11-streaming/03_vectorized_float4 B=exercise/11-streaming/03_vectorized_float4
#include "streaming_launch.cuh"

#include <cstdint>
#include <stdexcept>

namespace {

template <int n>
__global__ void saxpy_kernel(float *out, const float *x, const float *y, std::size_t N,
                             float alpha) {
  // EXERCISE BEGIN: stage 02's kernel moving float4 vectors, every float of [0, N) still written.
  COURSE_TODO();
  // EXERCISE END
}

bool aligned16(const void *p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

void saxpy(float *out, const float *x, const float *y, std::size_t n, float alpha,
           const streaming::launch_config &cfg, cudaStream_t stream) {
  if (n == 0) return;
  // EXERCISE BEGIN: refuse, with std::invalid_argument and before anything is launched, every
  // call the float4 kernel cannot take.
  COURSE_TODO();
  // EXERCISE END
  streaming::dispatch_unroll(cfg.unroll, [&](auto unroll) {
    streaming::launch(saxpy_kernel<decltype(unroll)::value>, cfg, stream, out, x, y, n, alpha);
  });
}

}  // namespace

STREAMING_DEVICE_STAGE(saxpy, true, "float4 vectors, unrolled (beyond the book)");
