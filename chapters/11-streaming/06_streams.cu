// SPDX-License-Identifier: BSD-3-Clause
// Stage 06: through the host, the arrays split over k streams. The CUDA Handbook 11.3
// (stream3Streams.cu, listing 11.6).
//
// In stage 05 the copies in, the kernel and the copy out still run one after the other, while
// PCIe can carry data both ways at once. Split the job so that one part's result travels back
// while another part's inputs travel in.
// Your task: cut [0, n) into ctx.n_streams chunks, each with its own copies in, kernel and copy
// out in a stream of its own, issued in the order the book issues them (listing 11.6), and return
// only when every chunk's result is in h_out. The host arrays come from your stage 05 allocator
// (lesson_pinned_memory.cuh).
// Watch for: n that does not divide by the stream count, chunks that keep the arrays' alignment,
// and the book's warning (11.3) about events recorded between streamed operations. Then read the
// benchmark's streams table: time by stream count, against the floor of fully overlapped copies.
#include "lesson_grid_stride.cuh"
#include "lesson_pinned_memory.cuh"
#include "streaming.h"

#include "common/check.h"

#include <algorithm>

namespace {

void saxpy_streamed(float *h_out, const float *h_x, const float *h_y, std::size_t n, float alpha,
                    streaming::host_context &ctx) {
  // EXERCISE BEGIN: stage 05's job split over the ctx.n_streams streams so that copies in, kernels
  // and copies out of different parts overlap, h_out complete when you return.
  COURSE_TODO();
  // EXERCISE END
}

}  // namespace

STREAMING_HOST_STAGE(saxpy_streamed, streaming::pinned_alloc, streaming::pinned_release,
                     course::host_memory::pinned, "k streams, pinned (stream3Streams, 11.3)");
