// SPDX-License-Identifier: BSD-3-Clause
// Stage 04: through the host, synchronous copies from pageable memory. The CUDA Handbook 11.3,
// stream1Device.cu (listing 11.5, first half).
//
// The arrays start and end in ordinary (pageable) host memory. cudaMemcpy from pageable memory
// is synchronous, and the driver stages it through a pinned bounce buffer, copying on the CPU
// as well as across PCIe. Nothing overlaps: host->device, kernel, device->host, one after the
// other. Four events split the time into those phases.
// What to look for: the kernel is about 2% of the wall time (the book: 12 of 570 ms); the
// transfer rates far below the pinned rates the benchmark measures as its ceiling.
#include "streaming.h"

#include "common/check.h"

namespace {

void saxpy_streamed(float *h_out, const float *h_x, const float *h_y, std::size_t n, float alpha,
                    streaming::host_context &ctx) {
  // EXERCISE BEGIN: copy x and y to ctx.d_x and ctx.d_y with cudaMemcpy, launch
  // streaming::launch_saxpy on the default stream, copy ctx.d_out back to h_out; record
  // ctx.ev_start, ev_h2d, ev_kernel and ev_d2h around the phases and set ctx.phases.
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

STREAMING_HOST_STAGE(saxpy_streamed, course::host_memory::pageable, "synchronous copies, pageable (stream1Device)");
