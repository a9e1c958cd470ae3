// SPDX-License-Identifier: BSD-3-Clause
// Lesson header of stage 04 (04_sm_aware): the multiply chosen by the device's compute
// capability. The CUDA Handbook 15.5.1.
//
// Your task: launch_by_capability receives a launcher that instantiates the kernel for the
// multiply it is given. Launch the instance this device wants: the 24-bit multiply where that is
// the native one, the 32-bit one everywhere else. Stages 05 and 06 include this header: once
// stage 04 passes they launch through your choice.
// Watch for: which GPUs had a native 24-bit multiply (15.5.1 says), and asking the device once.
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
  COURSE_TODO();
  // EXERCISE END
}

}  // namespace ncc
