// SPDX-License-Identifier: BSD-3-Clause
// Stage 05: through the host, asynchronous copies from pinned memory. The CUDA Handbook 11.2,
// stream2Async.cu (listing 11.5, second half).
//
// Changes from stage 04: the host arrays are pinned (page-locked; your pinned_alloc and
// pinned_release in pinned_memory.cuh), so the copy engines read and write them directly by DMA,
// and the copies are cudaMemcpyAsync in one stream: the CPU enqueues the whole job at once, the
// stream runs it in order (copies in, kernel, copy out), and the CPU waits once, at the end. The
// phases still run one after the other; only the staging through a bounce buffer is gone. The
// events are now recorded by the GPU as it reaches them in the stream, so the phase times are
// exact (stage 04's are not).
// What to look for: on the H100 (2026-11-23), 7.4x faster than stage 04 (30.3 against 223 ms;
// run A 5.7x, 29.9 against 170 ms; the book: 2x); host->device at 53 GB/s and device->host at 55
// (run A 55 and 55), as fast as the pinned ceilings the bench measured (52.5 and 50.6 GB/s, run A
// 54.8 and 55.1: run B's copy out beat its ceiling); kernel 0.6 ms: the wall time is the two
// copies one after the other, 20.4 + 9.7 ms (run A 19.6 + 9.7).
#include "pinned_memory.cuh"
#include "streaming.h"

#include "common/check.h"

namespace {

void saxpy_streamed(float *h_out, const float *h_x, const float *h_y, std::size_t n, float alpha,
                    streaming::host_context &ctx) {
  // EXERCISE BEGIN: the same job as stage 04, enqueued without waiting in one stream of ctx (copies
  // in, kernel, copy out, with the four events and ctx.phases as in 04), then one wait. Watch for:
  // the caller reads h_out as soon as you return, and a wait on a stream other than the one the
  // work is in (the default one, say) does not wait for it: ctx's streams are non-blocking.
  COURSE_TODO();
  // EXERCISE END
}

}  // namespace

STREAMING_HOST_STAGE(saxpy_streamed, streaming::pinned_alloc, streaming::pinned_release, course::host_memory::pinned,
                     "asynchronous copies, pinned (stream2Async, 11.2)");
