// SPDX-License-Identifier: BSD-3-Clause
// Stage 04: through the host, synchronous copies from pageable memory. The CUDA Handbook 11.1
// (stream1Device.cu, at the end of 11.1; its code is the first half of listing 11.5).
//
// Stages 01-03 start with the data in device memory. From here on it starts and ends in host
// memory, and getting it to the GPU and back is the lesson; the kernel is stage 01's. The arrays
// are ordinary pageable memory (operator new). A cudaMemcpy from pageable memory is synchronous:
// the driver copies the data on the CPU through a pinned staging buffer, which the copy engine
// can read, so nothing overlaps: host->device, kernel, device->host, one after the other. Four
// events split the time into those phases.
// Caveat (the book, 11.2, with listing 11.5): events recorded between synchronous copies are not
// exact. Each cudaMemcpy returns only once the GPU is idle, so the next event is recorded behind
// a pipeline bubble, and part of the CPU's staging copy falls outside the events. Read the phase
// times as an approximation; the wall time is the measurement.
// What to look for: in the host progression, kernel_ms against wall_ms (the book's GTX 680: 11.94
// of 570.22 ms, "about 2%"), and the H2D_ms and D2H_ms columns against the pinned copy rates on
// the benchmark's "ceilings:" line.
#include "lesson_grid_stride.cuh"
#include "streaming.h"

#include "common/check.h"

namespace {

// Pageable host memory: what malloc or new gives. (Stage 05 replaces these two.)
float *pageable_alloc(std::size_t count) { return new float[count]; }
void pageable_release(float *p) { delete[] p; }

void saxpy_streamed(float *h_out, const float *h_x, const float *h_y, std::size_t n, float alpha,
                    streaming::host_context &ctx) {
  // EXERCISE BEGIN: the job in order, each step done before the next starts: x and y into ctx's
  // device buffers, stage 01's kernel on them, the result back into h_out. Mark the start and the
  // end of each phase with ctx's four events, and say that you did (ctx.phases).
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

STREAMING_HOST_STAGE(saxpy_streamed, pageable_alloc, pageable_release, course::host_memory::pageable,
                     "synchronous copies, pageable (stream1Device, 11.1)");
