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
  COURSE_TODO();
  // EXERCISE END
}

}  // namespace

STREAMING_HOST_STAGE(saxpy_streamed, course::host_memory::pageable, "synchronous copies, pageable (stream1Device)");
