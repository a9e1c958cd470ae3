// SPDX-License-Identifier: BSD-3-Clause
// Stage 05: through the host, asynchronous copies from pinned memory. The CUDA Handbook 11.3,
// stream2Async.cu (listing 11.5, second half).
//
// Changes from stage 04: the host arrays are pinned (page-locked, cudaHostAlloc), so the copy
// engines read and write them directly by DMA, and the copies are cudaMemcpyAsync: the CPU
// enqueues all the work at once and waits once at the end. The phases still run one after the
// other on the one stream; only the staging through a bounce buffer is gone.
// What to look for: host->device and device->host rates near the pinned ceilings of the
// benchmark (the book saw 2x; today's gap between pageable and pinned is often wider).
#include "streaming.h"

#include "common/check.h"

namespace {

void saxpy_streamed(float *h_out, const float *h_x, const float *h_y, std::size_t n, float alpha,
                    streaming::host_context &ctx) {
  // EXERCISE BEGIN: stage 04 with cudaMemcpyAsync on the default stream, and one wait at the end.
  const std::size_t bytes = n * sizeof(float);
  CUDA_CHECK(cudaEventRecord(ctx.ev_start, 0));
  CUDA_CHECK(cudaMemcpyAsync(ctx.d_x, h_x, bytes, cudaMemcpyHostToDevice, 0));
  CUDA_CHECK(cudaMemcpyAsync(ctx.d_y, h_y, bytes, cudaMemcpyHostToDevice, 0));
  CUDA_CHECK(cudaEventRecord(ctx.ev_h2d, 0));
  streaming::launch_saxpy(ctx.d_out, ctx.d_x, ctx.d_y, n, alpha, ctx.launch, 0);
  CUDA_CHECK(cudaEventRecord(ctx.ev_kernel, 0));
  CUDA_CHECK(cudaMemcpyAsync(h_out, ctx.d_out, bytes, cudaMemcpyDeviceToHost, 0));
  CUDA_CHECK(cudaEventRecord(ctx.ev_d2h, 0));
  CUDA_CHECK(cudaEventSynchronize(ctx.ev_d2h));
  ctx.phases = true;
  // EXERCISE END
}

}  // namespace

STREAMING_HOST_STAGE(saxpy_streamed, course::host_memory::pinned, "asynchronous copies, pinned (stream2Async)");
