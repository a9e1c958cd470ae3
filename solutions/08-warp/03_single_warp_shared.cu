// SPDX-License-Identifier: BSD-3-Clause
// Stage 03: a single warp's commutative reduction in shared memory. After the article "single-warp
// parallel reduction of commutative operators" and The CUDA Handbook 12.2 (listing 12.2).
//
// Five halving steps add the upper half of 32 ints in shared memory onto the lower; every lane then
// reads the total. The book and the article rely on lock-step warps and volatile; since Volta that
// is a data race (racecheck reports it, tests seldom do). __syncwarp() between the steps is the
// barrier the code relied on. The shortened variant lets lanes 1..15 keep adding: each step reads
// into a register, synchronises, writes, synchronises.
// What to look for: `make sass-diff A=08-warp/02_warp_reduce B=08-warp/03_single_warp_shared`:
// SHFL.BFLY + add per step against two LDS, an add and an STS here, each __syncwarp() a NOP on the
// converged path; the shortened variant's saved conditions were predicated, not branched.
#include "warp_launch.cuh"

namespace {

// Every lane of the warp returns the sum of sh[0..32), the warp's own 32 ints of shared memory,
// which its lanes have just stored. Overwrites sh. All 32 lanes must call it.
__device__ int warp_sum_shared(int *sh, int lane) {
  // EXERCISE BEGIN: leave the total of sh[0..32) in sh[0] by five halving steps, correct when the
  // lanes run independently.
  __syncwarp();
#pragma unroll
  for (int h = warp::lanes / 2; h > 0; h /= 2) {
    if (lane < h) sh[lane] += sh[lane + h];
    __syncwarp();
  }
  // EXERCISE END
  return sh[0];
}

// The same, with lanes 0..15 all adding at every step (the article's shortened variant).
__device__ int warp_sum_shared_short(int *sh, int lane) {
  __syncwarp();
  if (lane < warp::lanes / 2) {
    // EXERCISE BEGIN: the same sum with all 16 of these lanes adding at every step (no lane < h
    // test), correct when they run independently.
    constexpr unsigned low_half = 0x0000ffffu;
    int v = sh[lane];
#pragma unroll
    for (int h = warp::lanes / 2; h > 0; h /= 2) {
      v += sh[lane + h];
      __syncwarp(low_half);
      sh[lane] = v;
      __syncwarp(low_half);
    }
    // EXERCISE END
  }
  __syncwarp();
  return sh[0];
}

template <bool Short>
__global__ void warp_sum_kernel(int *out, const int *in, int n_warps) {
  __shared__ int sh[warp::warps_per_block * warp::lanes];
  if (warp::warp_in_grid() >= std::size_t(n_warps)) return;
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  const int lane = warp::lane_id();
  int *mine = sh + warp::warp_in_block() * warp::lanes;
  mine[lane] = in[i];
  out[i] = Short ? warp_sum_shared_short(mine, lane) : warp_sum_shared(mine, lane);
}

// out[blockIdx.x] = the sum of this block's grid-stride share of in[0, n): the article's
// sumCommSingleBlockWithWarps. blockDim.x is a multiple of 32.
__global__ void block_sum_kernel(int *out, const int *in, std::size_t n) {
  __shared__ int r[1024];
  const int tid = threadIdx.x, lane = warp::lane_id();
  r[tid] = warp::grid_stride_sum(in, n);
  warp_sum_shared(r + tid - lane, lane);  // each warp's sum lands in the first int of its 32
  __syncthreads();
  if (tid < warp::lanes) {
    r[tid] = tid * warp::lanes < int(blockDim.x) ? r[tid * warp::lanes] : 0;
    const int total = warp_sum_shared(r, tid);
    if (tid == 0) out[blockIdx.x] = total;
  }
}

void warp_sums(int *out, const int *in, int n_warps) {
  warp::launch_warps(warp_sum_kernel<false>, n_warps, out, in, n_warps);
}

void warp_sums_short(int *out, const int *in, int n_warps) {
  warp::launch_warps(warp_sum_kernel<true>, n_warps, out, in, n_warps);
}

void sum(int *out, const int *in, std::size_t n, const warp::reduce_config &cfg) {
  warp::sum_two_pass(block_sum_kernel, out, in, n, cfg);
}

}  // namespace

WARP_STAGE(reduce_stage, "single-warp reduction in shared memory, with __syncwarp (12.2)",
           warp_sums, warp_sums_short, sum);
