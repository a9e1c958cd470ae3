// SPDX-License-Identifier: BSD-3-Clause
// Stage 05: through the host, asynchronous copies from pinned memory. The CUDA Handbook 11.2
// (stream2Async.cu; its code is the second half of listing 11.5).
//
// Stage 04's copies from pageable memory go through a staging copy on the CPU, and each one
// blocks until the GPU is idle. The book's two tools against that are pinned memory and
// asynchronous copies (which need pinned memory to be asynchronous at all).
// Your task, in two places: in the lesson header lesson_pinned_memory.cuh, an allocator of
// page-locked host memory and its release (stage 06 reuses them); here, stage 04's job enqueued in
// one of ctx's streams without waiting between its steps, with the four events recorded in that
// stream, and one wait at the end. Watch for: the caller reads h_out as soon as you return, and
// ctx's streams are non-blocking: a wait on another stream does not wait for them. Compare the
// phase times with stage 04's, and the copy rates with the pinned ceilings the benchmark prints.
#include "lesson_grid_stride.cuh"
#include "lesson_pinned_memory.cuh"
#include "streaming.h"

#include "common/check.h"

namespace {

void saxpy_streamed(float *h_out, const float *h_x, const float *h_y, std::size_t n, float alpha,
                    streaming::host_context &ctx) {
  // EXERCISE BEGIN: stage 04's job and events enqueued asynchronously in one of ctx's streams,
  // h_out complete when you return.
  COURSE_TODO();
  // EXERCISE END
}

}  // namespace

STREAMING_HOST_STAGE(saxpy_streamed, streaming::pinned_alloc, streaming::pinned_release,
                     course::host_memory::pinned,
                     "asynchronous copies, pinned (stream2Async, 11.2)");
