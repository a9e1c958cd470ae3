// SPDX-License-Identifier: BSD-3-Clause
// Stage 02: a warp's sum by butterfly shuffles, and a block's and a whole array's sum on top of
// it. After the article's warpReduce and reduceShfl kernels and The CUDA Handbook 12.8.
//
// The task: every lane of a warp ends with the sum of the warp's 32 values, moved between
// registers, with no shared memory; then a block's sum from its warps' sums. The array's sum is
// given: two launches of your block kernel, over the array, then in one block over the blocks'
// sums.
//
// Watch for: the book's and the article's shuffle has no mask and no longer compiles for Volta
// and later; the _sync form's mask must name every lane that calls it, and every lane it names
// must call it. The second-level sum has fewer values than lanes: a partial mask there is
// undefined even when the answer comes out right (the mask-checked build of this stage rejects
// it). Look for (`make sass STAGE=exercise/08-warp/02_warp_reduce`): shuffles and adds in the warp
// sum and no shared memory; `make lessons CHAPTER=08-warp` shows what the check counts.
#include "warp_launch.cuh"

namespace {

// Every lane returns the sum of v over the 32 lanes of its warp. All 32 lanes must call it.
__device__ int warp_sum(int v) {
  // EXERCISE BEGIN: return in every lane the sum of v over the warp's 32 lanes, exchanged in
  // registers.
  COURSE_TODO();
  // EXERCISE END
  return v;
}

__global__ void warp_sum_kernel(int *out, const int *in, int n_warps) {
  if (warp::warp_in_grid() >= std::size_t(n_warps)) return;
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  out[i] = warp_sum(in[i]);
}

// out[blockIdx.x] = the sum of this block's grid-stride share of in[0, n). blockDim.x is a
// multiple of 32.
__global__ void block_sum_kernel(int *out, const int *in, std::size_t n) {
  int v = warp_sum(warp::grid_stride_sum(in, n));
  // EXERCISE BEGIN: combine the warps' sums (each warp's is in v of all its lanes) into the block's
  // sum, in v of thread 0.
  COURSE_TODO();
  // EXERCISE END
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}

void warp_sums(int *out, const int *in, int n_warps) {
  warp::launch_warps(warp_sum_kernel, n_warps, out, in, n_warps);
}

void sum(int *out, const int *in, std::size_t n, const warp::reduce_config &cfg) {
  warp::sum_two_pass(block_sum_kernel, out, in, n, cfg);
}

}  // namespace

WARP_STAGE(reduce_stage, "warp sum by butterfly shuffles; block and grid sums on top (12.8)",
           warp_sums, nullptr, sum);
