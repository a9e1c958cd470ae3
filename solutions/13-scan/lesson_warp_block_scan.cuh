// SPDX-License-Identifier: BSD-3-Clause
// Lesson header, taught by stage 06 (06_warp_scans.cu). The CUDA Handbook 13.5.3 and listing 13.18:
// the warp scan with __shfl_up_sync (registers only, no shared memory, no __syncwarp), and the
// block scan on top of it: each warp scans its 32 values, the warps' totals go to shared memory,
// one warp scans them, each warp adds the total of the warps before it. Stage 06's main scan runs
// stage 05's passes on it; stages 08 and 09 (lesson_lookback.cuh) scan their rows and warps with
// shfl_warp_scan.
#pragma once

#include "scan_common.cuh"

namespace scan {

// Inclusive scan across the 32 lanes of a warp with __shfl_up_sync (all 32 lanes call it).
struct shfl_warp_scan {
  template <class T>
  __device__ static T inclusive(T x, unsigned lane) {
    // EXERCISE BEGIN: the inclusive warp scan in registers with __shfl_up_sync.
#pragma unroll
    for (unsigned offset = 1; offset < 32; offset *= 2) {
      const T y = __shfl_up_sync(full_mask, x, offset);
      if (lane >= offset) x += y;
    }
    return x;
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
    x = WarpScan::inclusive(x, lane);
    __syncthreads();  // earlier readers of s are done
    if (lane == 31) s.warp_sums[warp] = x;
    __syncthreads();
    if (warp == 0) {
      T w = lane < warps ? s.warp_sums[lane] : T(0);
      w = WarpScan::inclusive(w, lane);
      // Every lane has read before any lane writes: the compiler may load warp_sums[0] in every
      // lane at B = 32 (warps = 1), where lane 0 then writes it.
      __syncwarp();
      if (lane < warps) s.warp_sums[lane] = w;
    }
    __syncthreads();
    if (warp > 0) x += s.warp_sums[warp - 1];
    total = s.warp_sums[warps - 1];
    return x;
    // EXERCISE END
  }
};

}  // namespace scan
