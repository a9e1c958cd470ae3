// SPDX-License-Identifier: BSD-3-Clause
// Lesson header, taught by stage 06 (06_warp_scans.cu). The CUDA Handbook 13.5.3 and listing 13.18:
// the warp scan with the shuffle, and the block scan on top of it. Stage 06's main scan runs stage
// 05's passes on it; stages 08 and 09 (lesson_lookback.cuh) scan their rows and warps with your
// shfl_warp_scan.
//
// The task: a warp scan in registers (__shfl_up_sync), then scanBlock's three steps (figure 13.12)
// on it, with only the warps' totals in shared memory. Watch for: what __shfl_up_sync returns to a
// lane whose source lane does not exist; a shuffle orders registers, not shared memory, so a warp
// that reads shared slots and writes them back needs its own ordering (racecheck at B = 32 finds
// it).
#pragma once

#include "scan_common.cuh"

namespace scan {

// Inclusive scan across the 32 lanes of a warp with __shfl_up_sync (all 32 lanes call it).
struct shfl_warp_scan {
  template <class T>
  __device__ static T inclusive(T x, unsigned lane) {
    // EXERCISE BEGIN: the inclusive warp scan in registers with __shfl_up_sync.
    COURSE_TODO();
    // EXERCISE END
  }
};

// The block scan of 13-18 on a warp scan WarpScan, with the interface of shared_block_scan
// (lesson_block_scan.cuh): returns the inclusive scan of x across the block and sets total.
template <class WarpScan>
struct warp_block_scan {
  template <unsigned B, class T>
  struct storage {
    T warp_sums[32];
  };
  template <unsigned B, class T>
  __device__ static T inclusive(storage<B, T> &s, T x, T &total) {
    constexpr unsigned warps = B / 32;
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    // EXERCISE BEGIN: the block scan of figure 13.12 on WarpScan::inclusive, only the warps' totals
    // going through shared memory.
    COURSE_TODO();
    // EXERCISE END
  }
};

}  // namespace scan
