// SPDX-License-Identifier: BSD-3-Clause
#include "cub_baseline.h"

#include "common/check.h"

#include <cub/device/device_partition.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include <cuda/std/functional>

#include <cstdint>

namespace scan {
namespace {
struct is_odd {
  __device__ bool operator()(int x) const { return (x & 1) != 0; }
};
}  // namespace

unsigned char *cub_baseline::temp(std::size_t bytes) {
  if (bytes > temp_.size()) temp_ = course::device_buffer<unsigned char>(bytes);
  return temp_.get();
}

void cub_baseline::inclusive_sum(int *d_out, const int *d_in, std::size_t n, cudaStream_t stream) {
  std::size_t bytes = 0;  // a host-side query, no device work
  CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, d_in, d_out,
                                           static_cast<std::int64_t>(n), stream));
  CUDA_CHECK(cub::DeviceScan::InclusiveSum(temp(bytes), bytes, d_in, d_out,
                                           static_cast<std::int64_t>(n), stream));
}

void cub_baseline::select_odd(int *d_out, unsigned *d_count, const int *d_in, std::size_t n,
                              cudaStream_t stream) {
  std::size_t bytes = 0;
  CUDA_CHECK(cub::DeviceSelect::If(nullptr, bytes, d_in, d_out, d_count,
                                   static_cast<std::int64_t>(n), is_odd{}, stream));
  CUDA_CHECK(cub::DeviceSelect::If(temp(bytes), bytes, d_in, d_out, d_count,
                                   static_cast<std::int64_t>(n), is_odd{}, stream));
}

void cub_baseline::partition_odd(int *d_out, unsigned *d_count, const int *d_in, std::size_t n,
                                 cudaStream_t stream) {
  std::size_t bytes = 0;
  CUDA_CHECK(cub::DevicePartition::If(nullptr, bytes, d_in, d_out, d_count,
                                      static_cast<std::int64_t>(n), is_odd{}, stream));
  CUDA_CHECK(cub::DevicePartition::If(temp(bytes), bytes, d_in, d_out, d_count,
                                      static_cast<std::int64_t>(n), is_odd{}, stream));
}

void cub_baseline::inclusive_sum_by_key(int *d_out, const int *d_in, const std::uint8_t *d_keys,
                                        std::size_t n, cudaStream_t stream) {
  const auto count = static_cast<std::uint32_t>(n);
  std::size_t bytes = 0;
  CUDA_CHECK(cub::DeviceScan::InclusiveSumByKey(nullptr, bytes, d_keys, d_in, d_out, count,
                                                cuda::std::equal_to<>{}, stream));
  CUDA_CHECK(cub::DeviceScan::InclusiveSumByKey(temp(bytes), bytes, d_keys, d_in, d_out, count,
                                                cuda::std::equal_to<>{}, stream));
}

}  // namespace scan
