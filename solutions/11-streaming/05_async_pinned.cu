// SPDX-License-Identifier: BSD-3-Clause
// Stage 05: through the host, asynchronous copies from pinned memory. The CUDA Handbook 11.2
// (stream2Async.cu; its code is the second half of listing 11.5).
//
// Changes from stage 04: the host arrays are pinned (your pinned_alloc, in
// lesson_pinned_memory.cuh), so the copy engines reach them by DMA, and the copies are
// cudaMemcpyAsync in one stream: the CPU enqueues the whole job and waits once. The phases still
// run one after the other; only the staging is gone. The stream is one of ctx's non-blocking
// streams, not the book's NULL stream, as stage 06 needs.
// What to look for: this row's speedup in the host progression (the book: "almost twice as fast"),
// H2D_ms and D2H_ms near the pinned copy rates; wall_ms still about the sum of the three phases.
#include "lesson_grid_stride.cuh"
#include "lesson_pinned_memory.cuh"
#include "streaming.h"

#include "common/check.h"

namespace {

void saxpy_streamed(float *h_out, const float *h_x, const float *h_y, std::size_t n, float alpha,
                    streaming::host_context &ctx) {
  // EXERCISE BEGIN: stage 04's job and events enqueued asynchronously in one of ctx's streams,
  // h_out complete when you return.
  const std::size_t bytes = n * sizeof(float);
  cudaStream_t s = ctx.streams[0];
  CUDA_CHECK(cudaEventRecord(ctx.ev_start, s));
  CUDA_CHECK(cudaMemcpyAsync(ctx.d_x, h_x, bytes, cudaMemcpyHostToDevice, s));
  CUDA_CHECK(cudaMemcpyAsync(ctx.d_y, h_y, bytes, cudaMemcpyHostToDevice, s));
  CUDA_CHECK(cudaEventRecord(ctx.ev_h2d, s));
  streaming::launch_saxpy(ctx.d_out, ctx.d_x, ctx.d_y, n, alpha, ctx.launch, s);
  CUDA_CHECK(cudaEventRecord(ctx.ev_kernel, s));
  CUDA_CHECK(cudaMemcpyAsync(h_out, ctx.d_out, bytes, cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaEventRecord(ctx.ev_d2h, s));
  CUDA_CHECK(cudaEventSynchronize(ctx.ev_d2h));
  ctx.phases = true;
  // EXERCISE END
}

}  // namespace

STREAMING_HOST_STAGE(saxpy_streamed, streaming::pinned_alloc, streaming::pinned_release,
                     course::host_memory::pinned,
                     "asynchronous copies, pinned (stream2Async, 11.2)");
