// SPDX-License-Identifier: BSD-3-Clause
// Stage 04: through the host, synchronous copies from pageable memory. The CUDA Handbook 11.1
// (stream1Device.cu; its code is the first half of listing 11.5).
//
// From here on the data starts and ends in host memory, and getting it to the GPU and back is the
// lesson; the kernel is stage 01's. A cudaMemcpy from pageable memory is synchronous, staged by the
// CPU through a pinned buffer, so nothing overlaps. Four events split the time into phases; they
// are approximate (11.2: each copy returns only once the GPU is idle), the wall time exact.
// What to look for: in the host progression, kernel_ms against wall_ms (the book: "about 2%"), and
// H2D_ms and D2H_ms against the pinned copy rates on the benchmark's "ceilings:" line.
#include "lesson_grid_stride.cuh"
#include "streaming.h"

#include "common/check.h"

namespace {

// Pageable host memory: what malloc or new gives. (Stage 05 replaces these two.)
float *pageable_alloc(std::size_t count) { return new float[count]; }
void pageable_release(float *p) { delete[] p; }

void saxpy_streamed(float *h_out, const float *h_x, const float *h_y, std::size_t n, float alpha,
                    streaming::host_context &ctx) {
  // EXERCISE BEGIN: out = alpha * x + y on the host arrays through ctx's device buffers with
  // synchronous copies, each phase timed by ctx's events (ctx.phases).
  const std::size_t bytes = n * sizeof(float);
  CUDA_CHECK(cudaEventRecord(ctx.ev_start, 0));
  CUDA_CHECK(cudaMemcpy(ctx.d_x, h_x, bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(ctx.d_y, h_y, bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaEventRecord(ctx.ev_h2d, 0));
  streaming::launch_saxpy(ctx.d_out, ctx.d_x, ctx.d_y, n, alpha, ctx.launch, 0);
  CUDA_CHECK(cudaEventRecord(ctx.ev_kernel, 0));
  CUDA_CHECK(cudaMemcpy(h_out, ctx.d_out, bytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaEventRecord(ctx.ev_d2h, 0));
  CUDA_CHECK(cudaEventSynchronize(ctx.ev_d2h));
  ctx.phases = true;
  // EXERCISE END
}

}  // namespace

STREAMING_HOST_STAGE(saxpy_streamed, pageable_alloc, pageable_release,
                     course::host_memory::pageable,
                     "synchronous copies, pageable (stream1Device, 11.1)");
