// SPDX-License-Identifier: BSD-3-Clause
// The test "a stage allocates nothing it does not free", once for every chapter: the allocations
// this process holds (harness/alloc_tracker.h, so other programs on a shared GPU do not matter)
// must be the same before and after three calls that follow a first one (which may grow a
// workspace or fill a cache).
#pragma once

#include "harness/alloc_tracker.h"
#include "harness/catch.h"

#include "common/check.h"

#include <cuda_runtime.h>

#include <string>

namespace course {
namespace test {

template <class F>
void check_no_net_allocations(const std::string &who, F &&call) {
  REQUIRE(allocation_tracking_active());
  call();
  CUDA_CHECK(cudaDeviceSynchronize());
  const allocations before = live_allocations();
  for (int i = 0; i < 3; ++i) call();
  CUDA_CHECK(cudaDeviceSynchronize());
  const allocations after = live_allocations();
  INFO(who << ": after the first call " << describe(before) << "; after three more "
           << describe(after));
  CHECK(after == before);
}

}  // namespace test
}  // namespace course
