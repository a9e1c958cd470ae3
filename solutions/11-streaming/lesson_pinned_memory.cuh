// SPDX-License-Identifier: BSD-3-Clause
// Pinned (page-locked) host memory for the host stages: taught by stage 05_async_pinned (The CUDA
// Handbook 11.2, stream2Async.cu), reused by 06_streams, so stage 06 runs on your own allocator.
//
// The copy engines move data by DMA, which needs host pages that the operating system can neither
// move nor swap out: page-locked memory, allocated through the CUDA driver (which also records it,
// so that cudaMemcpyAsync knows it can skip the staging copy). Memory from malloc or new is
// pageable: copies from it go through the driver's own pinned bounce buffer, on the CPU, and
// cudaMemcpyAsync on it is not asynchronous. Pinning is slow (the pages are locked one by one) and
// takes memory the system can no longer page: allocate once, reuse, release when done.
#pragma once

#include "streaming.h"

#include "common/check.h"

namespace streaming {

// count floats of page-locked host memory (count >= 1).
inline float *pinned_alloc(std::size_t count) {
  float *p = nullptr;
  // EXERCISE BEGIN: count floats of page-locked host memory; a failure reported, never a null.
  CUDA_CHECK(
      cudaHostAlloc(reinterpret_cast<void **>(&p), count * sizeof(float), cudaHostAllocDefault));
  // EXERCISE END
  return p;
}

// Gives back what pinned_alloc returned.
inline void pinned_release(float *p) {
  // EXERCISE BEGIN: give the page-locked memory back, with the call that matches the allocation.
  CUDA_CHECK(cudaFreeHost(p));
  // EXERCISE END
}

}  // namespace streaming
