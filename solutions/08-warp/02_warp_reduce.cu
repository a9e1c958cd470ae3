// SPDX-License-Identifier: BSD-3-Clause
// Stage 02: a warp's sum by butterfly shuffles, and a block's and a whole array's sum on top of
// it. After the article's warpReduce and reduceShfl kernels and The CUDA Handbook 12.8.
//
// Five butterfly steps (xor 16, 8, 4, 2, 1) add the 32 values of a warp with no shared memory, and
// every lane ends with the total: after step k each lane holds the sum of the 2^k lanes that
// differ from it only in the low k bits. (Shifting down instead would leave the sum in lane 0
// alone, for the same five shuffles: the book's note 5 in 12.8.) A block then needs shared memory
// for one value per warp: each warp's lane 0 stores its warp's sum, and after __syncthreads the
// first warp reduces those the same way, every lane of it taking part.
//
// What changed from the article: __shfl_xor_sync with the full mask (the article's __shfl_xor has
// no mask and no longer compiles for Volta and later). Its grid reduction copied every block's sum
// back for the host to add; here a second launch of the same kernel, in one block, adds them. The
// blocks also read with a grid-stride loop, so any grid covers any n.
//
// What to look for in SASS: five SHFL.BFLY, each followed by its add (IMAD.IADD on sm_90), and no
// shared memory in the warp sum; one STS, one BAR.SYNC and one LDS between the two warp sums of the
// block kernel, and no WARPSYNC on a mask held in a register. The second warp sum runs inside an
// if the compiler cannot prove all 32 lanes reach, so it also gets a copy of its shuffles for a
// diverged warp (WARPSYNC.COLLECTIVE, behind a BRA.DIV test).
#include "warp_launch.cuh"

namespace {

// Every lane returns the sum of v over the 32 lanes of its warp. All 32 lanes must call it.
__device__ int warp_sum(int v) {
  // EXERCISE BEGIN: five butterfly steps: add the value of the lane whose id differs from this
  // lane's in bit 4, then bit 3, ..., then bit 0 (__shfl_xor_sync with warp::full_mask).
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
  // EXERCISE BEGIN: combine the warps' sums (every lane of each warp holds its warp's in v) into
  // the block's, in v of thread 0: one shared int per warp, __syncthreads, then the first warp
  // adds them with warp_sum (its lanes past the number of warps contribute 0).
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

WARP_STAGE(reduce_stage, "warp sum by butterfly shuffles; block and grid sums on top (12.8)", warp_sums, nullptr, sum);
