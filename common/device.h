// SPDX-License-Identifier: BSD-3-Clause
// Is there a usable GPU, and what is it. Written for CUDA 13, where cudaDeviceProp lost its clock
// fields: clocks come from cudaDeviceGetAttribute.
#pragma once

#include <string>

namespace course {

struct gpu_status {
  bool usable = false;
  std::string reason;  // why not, in one line, when !usable
};

// Never throws: "no driver", "no device", "driver too old" and "no code in this build for this GPU"
// become a reason.
gpu_status probe_gpu();

struct device_info {
  int ordinal = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sms = 0;
  int sm_clock_mhz = 0;   // peak
  int mem_clock_mhz = 0;  // peak
  int bus_width_bits = 0;
  long long l2_bytes = 0;
  long long memory_bytes = 0;
  long long shared_per_block_optin = 0;
  int max_threads_per_sm = 0;
  int runtime_version = 0;  // e.g. 13000
  int driver_version = 0;

  std::string cc() const { return std::to_string(cc_major) + "." + std::to_string(cc_minor); }
  // 2 transfers per clock (DDR) x bus width: the datasheet figure, for reference beside measured
  // ceilings.
  double theoretical_bandwidth_gbs() const {
    return 2.0 * mem_clock_mhz * 1e6 * bus_width_bits / 8 / 1e9;
  }
};

device_info query_device(int ordinal = -1);  // -1: the current device
std::string cuda_version_string(int v);      // 13000 -> "13.0"

// The virtual architecture (compute_XY as XY: 75, 80, 90, ...) of the code of this build that the
// current GPU runs: __CUDA_ARCH__ / 10 of the device code it executes. Usually the GPU's own
// compute capability; lower where the build holds no code that new and the driver compiles older
// PTX for it (a build with ARCH=75-virtual runs on an H100 as 75: the SM 7.5 paths of every stage).
// A stage whose device code has a path per architecture chooses on the host by this, not by the
// GPU's compute capability. 0: no GPU, or no code in this build that the GPU can run.
int device_code_version();
// Empty, or the line that says this build holds no code the GPU present can run (a build for
// another GPU, or made where there was none: ARCH=90 on a T4) and how to rebuild. probe_gpu says
// it.
std::string device_code_problem();

// Free and total device memory in bytes.
void device_memory(std::size_t &free_bytes, std::size_t &total_bytes);

}  // namespace course
