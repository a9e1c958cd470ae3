// SPDX-License-Identifier: BSD-3-Clause
// Grid sizing for grid-stride kernels: as many blocks as the GPU holds at once (every SM full),
// asked of the occupancy calculator for the kernel at hand rather than the book's fixed 1500.
#pragma once

#include "common/check.h"

#include <cuda_runtime.h>

namespace course {

template <class Kernel>
int resident_blocks(Kernel kernel, int threads_per_block, std::size_t dynamic_shared = 0) {
  int device = 0, sms = 0, per_sm = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads_per_block,
                                                           dynamic_shared));
  return sms * (per_sm > 0 ? per_sm : 1);
}

}  // namespace course
