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
// What to look for: the kernel is 0.3% of the wall time on the H100 (2026-11-23: 0.62 of 223 ms;
// run A 0.62 of 170 ms, 0.4%; the book's GTX 680: 12 of 570 ms, 2%), the rest is copying;
// host->device at 6.3 GB/s (run A 7.7) and device->host at 10.4 (run A 15.1), far below the pinned
// ceilings the benchmark measures (52.5 and 50.6 GB/s; run A 54.8 and 55.1). Of all the rows this
// one moves most between runs (223 against 170 ms; run B's spread 7.1% over 5 calls).
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
