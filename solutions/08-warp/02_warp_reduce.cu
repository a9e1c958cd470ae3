// SPDX-License-Identifier: BSD-3-Clause
// Stage 02: a warp's sum by butterfly shuffles, and a block's and a whole array's sum on top of it.
// After the article's warpReduce and reduceShfl kernels and The CUDA Handbook 12.8.
//
// Five butterfly steps (xor 16, 8, 4, 2, 1) add a warp's 32 values with no shared memory, and every
// lane ends with the total. A block then stores one sum per warp, and after __syncthreads the first
// warp reduces those the same way. Unlike the article: __shfl_xor_sync with the full mask, a second
// launch instead of the host adding the block sums, and a grid-stride loop.
// What to look for in SASS: five SHFL.BFLY, each followed by its add, and no shared memory in the
// warp sum; one STS, one BAR.SYNC and one LDS between the block kernel's two warp sums, and the
// diverged copy of the second (WARPSYNC.COLLECTIVE behind a BRA.DIV).
#include "warp_launch.cuh"

namespace {

// Every lane returns the sum of v over the 32 lanes of its warp. All 32 lanes must call it.
__device__ int warp_sum(int v) {
  // EXERCISE BEGIN: return in every lane the sum of v over the warp's 32 lanes, exchanged in
  // registers.
#pragma unroll
  for (int lane_mask = warp::lanes / 2; lane_mask > 0; lane_mask /= 2)
    v += __shfl_xor_sync(warp::full_mask, v, lane_mask);
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
  __shared__ int warp_sums[warp::lanes];
  const int lane = warp::lane_id(), warps = blockDim.x / warp::lanes;
  if (lane == 0) warp_sums[warp::warp_in_block()] = v;
  __syncthreads();
  if (warp::warp_in_block() == 0) v = warp_sum(lane < warps ? warp_sums[lane] : 0);
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
