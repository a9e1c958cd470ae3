// SPDX-License-Identifier: BSD-3-Clause
// Lesson header of stage 04 (04_sm_aware): the multiply chosen by the device's compute
// capability. The CUDA Handbook 15.5.1 (corrSharedSM, bSM1).
//
// launch_by_capability asks the runtime for the compute capability once (a static: it is the same
// device on every call) and launches the mul24 instance on SM 1.x, where the 24-bit multiply was
// the native one, the imad instance everywhere else. No GPU that CUDA 13 supports takes the mul24
// branch: since SM 2.0 IMAD is native and __umul24 emulated.
// Stages 05 and 06 include this header: once stage 04 passes they launch through the choice
// written here.
#pragma once

#include "lesson_shared_tile.cuh"

#include "common/check.h"

#include <cuda_runtime.h>

namespace ncc {

// The 24-bit multiply: native on SM 1.x, where the 32-bit one took several instructions; since
// SM 2.0 the roles are reversed (IMAD is native, __umul24 emulated). Exact for byte products.
struct mul24 {
  static __device__ __forceinline__ unsigned mul(unsigned a, unsigned b) { return __umul24(a, b); }
};

// Calls launch(Mul{}) with the multiply this device wants: the host's half of 15.5.1. `launch`
// is a generic lambda that instantiates and launches the kernel for decltype(its argument).
template <class Launch>
void launch_by_capability(Launch &&launch) {
  // EXERCISE BEGIN: launch the instantiation that the current device's compute capability calls
  // for, asking the device only once.
  static const int major = [] {
    int device = 0, m = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&m, cudaDevAttrComputeCapabilityMajor, device));
    return m;
  }();
  if (major < 2) launch(mul24{});  // SM 1.x: the book's bSM1 path (no CUDA 13 target has one)
  else launch(imad{});
  // EXERCISE END
}

}  // namespace ncc
