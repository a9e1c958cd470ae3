// SPDX-License-Identifier: BSD-3-Clause
// Stage 04: through the host, synchronous copies from pageable memory. The CUDA Handbook 11.1
// (stream1Device.cu, at the end of 11.1; its code is the first half of listing 11.5).
//
// From here on the arrays start and end in host memory, and getting them to the GPU and back is
// the lesson; the kernel is your stage 01 (lesson_grid_stride.cuh's launch_saxpy), so finish that
// first. Your task: the baseline that stages 05-07 improve on. The arrays are ordinary pageable
// memory (the allocator below is given). Bring x and y to the device buffers ctx holds, run the
// kernel on them, bring the result back into h_out, each step finished before the next starts, and
// time the three phases with ctx's events (streaming.h says what ctx holds). Watch for: h_out must
// hold the result when you return. Before you trust the phase times, read the book's caveat in 11.2
// about events recorded between synchronous copies.
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
  COURSE_TODO();
  // EXERCISE END
}

}  // namespace

STREAMING_HOST_STAGE(saxpy_streamed, pageable_alloc, pageable_release,
                     course::host_memory::pageable,
                     "synchronous copies, pageable (stream1Device, 11.1)");
