// SPDX-License-Identifier: BSD-3-Clause
#include "common/device.h"

#include "common/check.h"

#include <cuda_runtime.h>

namespace course {

gpu_status probe_gpu() {
  int driver = 0;
  if (cudaDriverGetVersion(&driver) != cudaSuccess || driver == 0)
    return {false, "no NVIDIA driver found (cudaDriverGetVersion reports none)"};
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return {false,
            std::string("no usable CUDA GPU (cudaGetDeviceCount: ") + cudaGetErrorName(e) + ")"};
  }
  if (count == 0) return {false, "no CUDA GPU present"};
  const std::string no_code = device_code_problem();
  if (!no_code.empty()) return {false, no_code};
  return {true, ""};
}

std::string cuda_version_string(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

device_info query_device(int ordinal) {
  if (ordinal < 0) CUDA_CHECK(cudaGetDevice(&ordinal));
  cudaDeviceProp p{};
  CUDA_CHECK(cudaGetDeviceProperties(&p, ordinal));
  device_info d;
  d.ordinal = ordinal;
  d.name = p.name;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.sms = p.multiProcessorCount;
  int khz = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, ordinal));
  d.sm_clock_mhz = khz / 1000;
  CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, ordinal));
  d.mem_clock_mhz = khz / 1000;
  CUDA_CHECK(cudaDeviceGetAttribute(&d.bus_width_bits, cudaDevAttrGlobalMemoryBusWidth, ordinal));
  d.l2_bytes = p.l2CacheSize;
  d.memory_bytes = static_cast<long long>(p.totalGlobalMem);
  d.shared_per_block_optin = static_cast<long long>(p.sharedMemPerBlockOptin);
  d.max_threads_per_sm = p.maxThreadsPerMultiProcessor;
  CUDA_CHECK(cudaRuntimeGetVersion(&d.runtime_version));
  CUDA_CHECK(cudaDriverGetVersion(&d.driver_version));
  return d;
}

void device_memory(std::size_t &free_bytes, std::size_t &total_bytes) {
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
}

}  // namespace course
