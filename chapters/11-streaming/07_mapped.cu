// SPDX-License-Identifier: BSD-3-Clause
// Stage 07: through the host, mapped pinned memory. The CUDA Handbook 11.4 (stream4Mapped.cu,
// listing 11.7).
//
// Stage 06 still copies, and its first copy in and last copy out overlap nothing. Mapped pinned
// memory removes the copies: host memory that the GPU can address, so that the kernel's own loads
// and stores cross PCIe as it runs.
// Your task: an allocator of pinned host memory mapped into the device's address space, and its
// release; then the job with no copies and no device buffers: stage 01's kernel run straight on
// the three host arrays, which it must address by their device addresses.
// Watch for: the host arrays may start at any offset into their allocations; h_out must hold the
// result when you return. Read the book's caveats (11.4): mapped memory suits writes better than
// reads, and is "zero copy" proper only on an integrated GPU.
#include "lesson_grid_stride.cuh"
#include "streaming.h"

#include "common/check.h"

namespace {

// count floats of pinned host memory, mapped into the device's address space.
float *mapped_alloc(std::size_t count) {
  float *p = nullptr;
  // EXERCISE BEGIN: count floats of page-locked host memory that the device can address.
  COURSE_TODO();
  // EXERCISE END
  return p;
}

void mapped_release(float *p) {
  // EXERCISE BEGIN: give the mapped memory back.
  COURSE_TODO();
  // EXERCISE END
}

void saxpy_streamed(float *h_out, const float *h_x, const float *h_y, std::size_t n, float alpha,
                    streaming::host_context &ctx) {
  // EXERCISE BEGIN: stage 01's kernel on the mapped host arrays themselves, no copies, h_out
  // complete when you return.
  COURSE_TODO();
  // EXERCISE END
}

}  // namespace

STREAMING_HOST_STAGE(saxpy_streamed, mapped_alloc, mapped_release, course::host_memory::mapped,
                     "mapped pinned memory (stream4Mapped, 11.4)");
