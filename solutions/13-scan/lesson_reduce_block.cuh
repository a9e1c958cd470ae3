// SPDX-License-Identifier: BSD-3-Clause
// Lesson header, taught by stage 03 (03_reduce_then_scan.cu). The CUDA Handbook 13.4.2: the first
// pass of reduce-then-scan only needs each block's total, and listing 13.7 gets it with the
// reduction of chapter 12 (reduceBlock, listing 12.3), not with a scan. Stages 04, 05 and 07 run
// this reduce_block in their first pass.
//
// A reduction folds: half the threads add the other half's values, log2(B) times, and the last 32
// values are folded by one warp. Here the last warp folds with __shfl_down_sync, in registers,
// where the book's listing relies on a warp-synchronous volatile pointer.
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
  __syncthreads();  // earlier readers of sh are done
  sh[t] = x;
  __syncthreads();
#pragma unroll
  for (unsigned half = B / 2; half >= 64; half /= 2) {
    if (t < half) sh[t] = x = x + sh[t + half];
    __syncthreads();
  }
  if (t < 32) {
    if (B >= 64) x += sh[t + 32];
#pragma unroll
    for (unsigned offset = 16; offset > 0; offset /= 2) x += __shfl_down_sync(full_mask, x, offset);
  }
  return x;
  // EXERCISE END
}

}  // namespace scan
