// SPDX-License-Identifier: BSD-3-Clause
// Stage 04: through the host, synchronous copies from pageable memory. The CUDA Handbook 11.1,
// stream1Device.cu (the end of 11.1; its timings are the first half of listing 11.5).
//
// The arrays start and end in ordinary (pageable) host memory, from operator new. cudaMemcpy from
// pageable memory is synchronous, and the driver stages it through a pinned bounce buffer, copying
// on the CPU as well as across PCIe. Nothing overlaps: host->device, kernel, device->host, one
// after the other. Four events split the time into those phases.
// Caveat (the book, with listing 11.5): events recorded between synchronous copies are not exact.
// Each cudaMemcpy returns only once the GPU is idle, so the next event is recorded behind a
// pipeline bubble, and the CPU's staging copy is partly outside the events: read the phase times
// as an approximation; the wall time is the measurement.
// What to look for: the kernel is 0.3% of the wall time on the H100 (0.63 of 226 ms; the book's
// GTX 680: 12 of 570 ms, 2%), the rest is copying; host->device at about 6 GB/s and device->host
// at about 9, far below the pinned ceilings the benchmark measures (53-54 GB/s).
#include "streaming.h"

#include "common/check.h"

namespace {

// Pageable host memory: what malloc or new gives. (Stage 05 replaces these two.)
float *pageable_alloc(std::size_t count) { return new float[count]; }
void pageable_release(float *p) { delete[] p; }

void saxpy_streamed(float *h_out, const float *h_x, const float *h_y, std::size_t n, float alpha,
                    streaming::host_context &ctx) {
  // EXERCISE BEGIN: copy x and y to ctx.d_x and ctx.d_y with cudaMemcpy, launch
  // streaming::launch_saxpy on the default stream, copy ctx.d_out back to h_out; record
  // ctx.ev_start, ev_h2d, ev_kernel and ev_d2h around the phases and set ctx.phases.
  COURSE_TODO();
  // EXERCISE END
}

}  // namespace

STREAMING_HOST_STAGE(saxpy_streamed, pageable_alloc, pageable_release, course::host_memory::pageable,
                     "synchronous copies, pageable (stream1Device, 11.1)");
