// SPDX-License-Identifier: BSD-3-Clause
// This process's own CUDA allocations, for the tests "a stage allocates nothing it does not free".
//
// cudaMemGetInfo reports the whole GPU: on a GPU shared by a class, or with sanitizer runs side by
// side, another process's allocation makes it move, and the test failed for no fault of the stage.
// Instead, every test program is linked with -Wl,--wrap for the runtime's allocation calls
// (cudaMalloc, cudaMallocManaged, cudaMallocPitch, cudaMallocAsync, cudaMallocHost, cudaHostAlloc
// and their frees): each call made by this program's own code, stages included, goes through a
// counting wrapper (alloc_tracker.cpp) before the runtime. Libraries linked as shared objects
// (cuFFT, cuBLAS, NPP) allocate through their own copies of the runtime and are not counted.
#pragma once

#include <cstddef>
#include <string>

namespace course {
namespace test {

struct allocations {
  std::size_t device_count = 0, device_bytes = 0;  // cudaMalloc*, not yet freed
  std::size_t host_count = 0, host_bytes = 0;      // page-locked host memory, not yet freed
  bool operator==(const allocations &o) const {
    return device_count == o.device_count && device_bytes == o.device_bytes &&
           host_count == o.host_count && host_bytes == o.host_bytes;
  }
  bool operator!=(const allocations &o) const { return !(*this == o); }
};

// What this process has allocated through the CUDA runtime and not yet freed.
allocations live_allocations();
// Whether the wrappers are linked in (false: the counts above stay 0 and mean nothing).
bool allocation_tracking_active();
// "3 device allocations (12 MiB), 0 pinned host allocations (0 B)"
std::string describe(const allocations &a);

}  // namespace test
}  // namespace course
