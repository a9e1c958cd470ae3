// SPDX-License-Identifier: BSD-3-Clause
// Lesson header, taught by stage 02 (02_scan_then_fan.cu). The CUDA Handbook 13.4.1, listing 13.3
// (scanBlock, figure 13.12), on the shared-memory warp scan of 13.5 (scanWarp, listing 13.13).
// Stages 03, 04, 05 and 07 run the block scan you write here; stage 06 times your scan_warp as the
// conditional warp scan.
//
// The task: a warp scan in shared memory (Kogge-Stone, figure 13.11: five steps of doubling
// distance), then the block scan of figure 13.12 built from it. The book's listings rely on the
// warp running in lock-step through a volatile pointer; since Volta the lanes of a warp may run
// apart, so order each step's reads and writes yourself (__syncwarp). Count the block-wide barriers
// your block scan needs, and why each is there: racecheck (make check STAGE=...) finds a missing
// one.
#pragma once

#include "scan_common.cuh"

namespace scan {

// Inclusive scan of one warp's 32 values: sh is this warp's 32 slots in shared memory, x this
// lane's value; returns x[0] + ... + x[lane] and leaves the scan in sh. All 32 lanes call it.
template <class T>
__device__ T scan_warp(T *sh, T x, unsigned lane) {
  // EXERCISE BEGIN: the conditional warp scan of listing 13.13, correct on lanes that do not run in
  // lock-step.
  COURSE_TODO();
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
  COURSE_TODO();
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
