// SPDX-License-Identifier: BSD-3-Clause
// Stage 06: through the host, the arrays split over k streams. The CUDA Handbook 11.3,
// stream3Streams.cu (listing 11.6).
//
// Changes from stage 05: the work is cut into ctx.n_streams chunks, each with its own
// host->device copies, kernel and device->host copy in its own stream. Work in different streams
// may overlap, so chunk i's results can travel back while chunk i+1's inputs travel in: with a
// copy engine per direction (every GPU since Fermi's Teslas, all current ones) the two PCIe
// directions are busy at once. As in the book, the copies, kernels and copies back are issued
// breadth first, in three loops. n need not divide by k: the last chunk takes what is left.
// Chunks start on multiples of 64 floats (256 bytes), so they stay as aligned as the arrays.
// The host arrays are pinned by your allocator from stage 05 (pinned_memory.cuh): the copies
// must be asynchronous for the streams to overlap at all.
// No events between the streamed operations: the book (11.3) warns that recording events between
// them breaks the concurrency on most hardware, so the stage records no phases and the benchmark
// times the call as a whole.
// What to look for: the streams table of the benchmark (the book: 2 streams best on its GPU with
// one copy engine). The H100 (2026-11-23), with a copy engine per direction, goes from 29.9 ms at
// 1 stream to 22.1-22.9 ms at 6-8 (run A 29.9 to 22.1-22.3), within 3.4% of the floor of
// overlapped transfers (22.17 ms, run A 21.72) in both runs; run B's 8-stream row reached 0.997x
// the floor, itself a measurement. As a stage (the bench's host table) it took 23.89 ms at 8
// streams, 1.08x the floor (run A 22.43 ms at 7, 1.03x). Several of run B's rows warned, spreads of
// 12.6-20.7% from a few slow calls, with their medians near their minima.
#include "pinned_memory.cuh"
#include "streaming.h"

#include "common/check.h"

#include <algorithm>

namespace {

void saxpy_streamed(float *h_out, const float *h_x, const float *h_y, std::size_t n, float alpha,
                    streaming::host_context &ctx) {
  // EXERCISE BEGIN: split [0, n) into ctx.n_streams chunks (a multiple of 64 floats each, the last
  // one shorter); in stream ctx.streams[s] copy chunk s of x and y in, run launch_saxpy on it, copy
  // its result out; issue all copies in, then all kernels, then all copies out; then wait for
  // every stream.
  const int k = ctx.n_streams;
  const std::size_t chunk = ((n + k - 1) / k + 63) / 64 * 64;
  auto count = [&](int s) { return std::min(chunk, n - std::min(n, s * chunk)); };
  for (int s = 0; s < k; s++) {
    if (std::size_t c = count(s)) {
      CUDA_CHECK(cudaMemcpyAsync(ctx.d_x + s * chunk, h_x + s * chunk, c * sizeof(float), cudaMemcpyHostToDevice, ctx.streams[s]));
      CUDA_CHECK(cudaMemcpyAsync(ctx.d_y + s * chunk, h_y + s * chunk, c * sizeof(float), cudaMemcpyHostToDevice, ctx.streams[s]));
    }
  }
  for (int s = 0; s < k; s++)
    streaming::launch_saxpy(ctx.d_out + s * chunk, ctx.d_x + s * chunk, ctx.d_y + s * chunk, count(s), alpha, ctx.launch,
                            ctx.streams[s]);
  for (int s = 0; s < k; s++) {
    if (std::size_t c = count(s))
      CUDA_CHECK(cudaMemcpyAsync(h_out + s * chunk, ctx.d_out + s * chunk, c * sizeof(float), cudaMemcpyDeviceToHost, ctx.streams[s]));
  }
  for (int s = 0; s < k; s++) CUDA_CHECK(cudaStreamSynchronize(ctx.streams[s]));
  // EXERCISE END
}

}  // namespace

STREAMING_HOST_STAGE(saxpy_streamed, streaming::pinned_alloc, streaming::pinned_release, course::host_memory::pinned,
                     "k streams, pinned (stream3Streams, 11.3)");
