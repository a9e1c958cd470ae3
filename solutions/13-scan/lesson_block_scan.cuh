// SPDX-License-Identifier: BSD-3-Clause
// Lesson header, taught by stage 02 (02_scan_then_fan.cu). The CUDA Handbook 13.4.1, listing 13.3
// (scanBlock, figure 13.12), on the shared-memory warp scan of 13.5 (scanWarp, listing 13.13).
// Stages 03, 04, 05 and 07 run the block scan written here; stage 06 times scan_warp as the
// conditional warp scan.
//
// scanBlock in three steps: (1) every warp scans its 32 values; (2) the warps' totals go to shared
// memory and one warp scans them; (3) each warp adds the total of the warps before it. Unlike the
// book's listing, scan_warp is not "warp-synchronous" through a volatile pointer: since Volta the
// lanes of a warp may run apart, so __syncwarp() separates each step's reads from its writes. Three
// __syncthreads() per block scan, whatever B.
#pragma once

#include "scan_common.cuh"

namespace scan {

// Inclusive scan of one warp's 32 values: sh is this warp's 32 slots in shared memory, x this
// lane's value; returns x[0] + ... + x[lane] and leaves the scan in sh. All 32 lanes call it.
template <class T>
__device__ T scan_warp(T *sh, T x, unsigned lane) {
  // EXERCISE BEGIN: the conditional warp scan of listing 13.13, correct on lanes that do not run in
  // lock-step.
  sh[lane] = x;
  __syncwarp();
  for (unsigned offset = 1; offset < 32; offset *= 2) {
    if (lane >= offset) x += sh[lane - offset];
    __syncwarp();  // every lane has read before any lane writes
    sh[lane] = x;
    __syncwarp();
  }
  return x;
  // EXERCISE END
}

// What scan_block needs in shared memory: 32 slots per warp, and the warps' totals.
template <unsigned B, class T>
struct block_scan_storage {
  T warp_slots[B];
  T warp_sums[32];
};

// scanBlock (listing 13.3): returns x[0] + ... + x[threadIdx.x] over the block's B values and sets
// total to the sum of all B. Every thread of the block calls it; a caller may call it again and
// again on the same storage (a tile loop).
template <unsigned B, class T>
__device__ T scan_block(block_scan_storage<B, T> &s, T x, T &total) {
  constexpr unsigned warps = B / 32;
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  // EXERCISE BEGIN: the block scan of figure 13.12 on scan_warp: return this thread's inclusive
  // value across the block and set total to the block's sum.
  x = scan_warp(s.warp_slots + 32 * warp, x, lane);
  __syncthreads();  // the previous call's readers of warp_sums are done
  if (lane == 31) s.warp_sums[warp] = x;
  __syncthreads();
  if (warp == 0) {
    const T w = lane < warps ? s.warp_sums[lane] : T(0);
    // Every lane has read before scan_warp writes: at B = 32 the compiler may load warp_sums[0]
    // in every lane for the guarded read above, and lane 0 then writes that slot.
    __syncwarp();
    scan_warp(s.warp_sums, w, lane);
  }
  __syncthreads();
  if (warp > 0) x += s.warp_sums[warp - 1];
  total = s.warp_sums[warps - 1];
  return x;
  // EXERCISE END
}

// scan_block as a policy for the two-level kernels (stage 06 swaps in warp_block_scan).
struct shared_block_scan {
  template <unsigned B, class T>
  using storage = block_scan_storage<B, T>;
  template <unsigned B, class T>
  __device__ static T inclusive(storage<B, T> &s, T x, T &total) {
    return scan_block<B>(s, x, total);
  }
};

}  // namespace scan
