// SPDX-License-Identifier: BSD-3-Clause
// Lesson header, taught by stage 03 (03_reduce_then_scan.cu). The CUDA Handbook 13.4.2: the first
// pass of reduce-then-scan only needs each block's total, and listing 13.7 gets it with the
// reduction of chapter 12 (reduceBlock, listing 12.3), not with a scan. Stages 04, 05 and 07 run
// the reduce_block you write here in their first pass.
//
// The task: the block's sum of B values, by folding in shared memory as chapter 12 does. The book's
// last warp relies on lock-step execution through a volatile pointer; yours may not (since Volta
// the lanes of a warp may run apart): a warp can add in registers with the shuffles instead.
// Watch for: the smallest blocks (B = 32, 64), and the barriers between one step's writes and the
// next step's reads.
#pragma once

#include "scan_common.cuh"

namespace scan {

// The sum of the block's B values x, returned to thread 0 (what other threads get is unspecified).
// sh holds B values. Every thread of the block calls it; a caller may call it again on the same sh.
template <unsigned B, class T>
__device__ T reduce_block(T *sh, T x) {
  const unsigned t = threadIdx.x;
  // EXERCISE BEGIN: return the sum of the block's B values to thread 0, the last warp's steps in
  // registers.
  COURSE_TODO();
  // EXERCISE END
}

}  // namespace scan
