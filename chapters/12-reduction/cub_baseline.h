// SPDX-License-Identifier: BSD-3-Clause
// The library baseline of the chapter's benchmark: CUB's DeviceReduce::Sum (cub_baseline.cu, so
// the benchmark itself stays host C++).
#pragma once

#include "common/memory.h"

#include <cuda_runtime.h>

#include <cstddef>

namespace reduction {

class cub_sum {
 public:
  // Temporary storage for inputs of up to max_n ints, allocated once (not timed).
  explicit cub_sum(std::size_t max_n);
  // *d_answer = d_in[0] + ... + d_in[n-1], n <= max_n, enqueued on `stream`.
  void operator()(int *d_answer, const int *d_in, std::size_t n, cudaStream_t stream);

 private:
  course::device_buffer<unsigned char> temp_;
};

}  // namespace reduction
