// SPDX-License-Identifier: BSD-3-Clause
// Stage 06: through the host, the arrays split over k streams. The CUDA Handbook 11.3
// (stream3Streams.cu, listing 11.6).
//
// Changes from stage 05: the work is cut into ctx.n_streams chunks, each with its own copies in,
// kernel and copy out in a stream of its own, issued breadth first as in the book, so chunk i's
// result travels back while chunk i+1's inputs travel in (one copy engine per direction). Chunks
// start on 256-byte boundaries. No events between the streamed operations: 11.3 warns they break
// the concurrency, so the benchmark times the call as a whole.
// What to look for: the benchmark's streams table, time_ms and x_floor by stream count (the book,
// with one copy engine: 2 streams best), and this row's x_floor in the host progression.
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
  const int k = ctx.n_streams;
  const std::size_t chunk = ((n + k - 1) / k + 63) / 64 * 64;
  auto count = [&](int s) { return std::min(chunk, n - std::min(n, s * chunk)); };
  for (int s = 0; s < k; s++) {
    if (std::size_t c = count(s)) {
      CUDA_CHECK(cudaMemcpyAsync(ctx.d_x + s * chunk, h_x + s * chunk, c * sizeof(float),
                                 cudaMemcpyHostToDevice, ctx.streams[s]));
      CUDA_CHECK(cudaMemcpyAsync(ctx.d_y + s * chunk, h_y + s * chunk, c * sizeof(float),
                                 cudaMemcpyHostToDevice, ctx.streams[s]));
    }
  }
  for (int s = 0; s < k; s++)
    streaming::launch_saxpy(ctx.d_out + s * chunk, ctx.d_x + s * chunk, ctx.d_y + s * chunk,
                            count(s), alpha, ctx.launch, ctx.streams[s]);
  for (int s = 0; s < k; s++) {
    if (std::size_t c = count(s))
      CUDA_CHECK(cudaMemcpyAsync(h_out + s * chunk, ctx.d_out + s * chunk, c * sizeof(float),
                                 cudaMemcpyDeviceToHost, ctx.streams[s]));
  }
  for (int s = 0; s < k; s++) CUDA_CHECK(cudaStreamSynchronize(ctx.streams[s]));
  // EXERCISE END
}

}  // namespace

STREAMING_HOST_STAGE(saxpy_streamed, streaming::pinned_alloc, streaming::pinned_release,
                     course::host_memory::pinned, "k streams, pinned (stream3Streams, 11.3)");
