// SPDX-License-Identifier: BSD-3-Clause
// The library baselines of the chapter's benchmark: CUB's DeviceScan::InclusiveSum and
// DeviceSelect::If keeping the odd ints (cub_baseline.cu, so the benchmark stays host C++).
#pragma once

#include "common/memory.h"

#include <cuda_runtime.h>

#include <cstddef>

namespace scan {

class cub_baseline {
 public:
  // d_out = inclusive sum of d_in[0, n), enqueued on `stream`.
  void inclusive_sum(int *d_out, const int *d_in, std::size_t n, cudaStream_t stream);
  // The odd elements of d_in, in order, to d_out; their count to *d_count (device).
  void select_odd(int *d_out, unsigned *d_count, const int *d_in, std::size_t n, cudaStream_t stream);

 private:
  unsigned char *temp(std::size_t bytes);
  course::device_buffer<unsigned char> temp_;
};

}  // namespace scan
