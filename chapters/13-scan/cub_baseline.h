// SPDX-License-Identifier: BSD-3-Clause
// The library baselines of the chapter's benchmark: CUB's DeviceScan::InclusiveSum,
// DeviceSelect::If and DevicePartition::If on the odd ints, and DeviceScan::InclusiveSumByKey for
// the segmented scan (cub_baseline.cu, so the benchmark stays host C++).
#pragma once

#include "common/memory.h"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace scan {

class cub_baseline {
 public:
  // d_out = inclusive sum of d_in[0, n), enqueued on `stream`.
  void inclusive_sum(int *d_out, const int *d_in, std::size_t n, cudaStream_t stream);
  // The odd elements of d_in, in order, to d_out; their count to *d_count (device).
  void select_odd(int *d_out, unsigned *d_count, const int *d_in, std::size_t n,
                  cudaStream_t stream);
  // DevicePartition::If: the odd elements of d_in, in order, to d_out[0, count), the others after
  // them in REVERSE order (CUB's contract: no total needed in advance); count to *d_count.
  void partition_odd(int *d_out, unsigned *d_count, const int *d_in, std::size_t n,
                     cudaStream_t stream);
  // InclusiveSumByKey: a scan restarted wherever d_keys[i] != d_keys[i-1] (n < 2^32). With keys
  // that alternate 0/1 from segment to segment (the parity of the segment's number), it is the
  // segmented scan of head flags, reading one byte per element as stage 11 does.
  void inclusive_sum_by_key(int *d_out, const int *d_in, const std::uint8_t *d_keys, std::size_t n,
                            cudaStream_t stream);

 private:
  unsigned char *temp(std::size_t bytes);
  course::device_buffer<unsigned char> temp_;
};

}  // namespace scan
