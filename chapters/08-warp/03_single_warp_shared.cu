// SPDX-License-Identifier: BSD-3-Clause
// Stage 03: a single warp's commutative reduction in shared memory. After the article "single-warp
// parallel reduction of commutative operators" (sumCommSingleWarp, sumCommSingleBlockWithWarps)
// and the warp-synchronous tail of The CUDA Handbook 12.2 (listing 12.2).
//
// The task: the same warp sum as stage 02, through the warp's 32 ints of shared memory: five
// halving steps add the upper half onto the lower (16, 8, 4, 2, 1 lanes at work), and every lane
// reads the total from the first int. Then the article's shortened variant, in which lanes 0..15
// add at every step, to save the conditions.
//
// Watch for: the book and the article need no barrier because they take the warp to execute in
// lockstep, and mark the array volatile. Since Volta the lanes of a warp are scheduled
// independently: volatile keeps the compiler from holding values in registers, but it orders
// nothing between lanes, and after an if the lanes need not run together. Work out which reads must
// wait for which stores, and what makes them wait. racecheck (run by make check on this stage, on a
// GPU) reports a race that the plain tests seldom see. Then compare with stage 02: `make sass-diff
// A=08-warp/02_warp_reduce B=exercise/08-warp/03_single_warp_shared`.
#include "warp_launch.cuh"

namespace {

// Every lane of the warp returns the sum of sh[0..32), the warp's own 32 ints of shared memory,
// which its lanes have just stored. Overwrites sh. All 32 lanes must call it.
__device__ int warp_sum_shared(int *sh, int lane) {
  // EXERCISE BEGIN: leave the total of sh[0..32) in sh[0] by five halving steps, correct when the
  // lanes run independently.
  COURSE_TODO();
  // EXERCISE END
  return sh[0];
}

// The same, with lanes 0..15 all adding at every step (the article's shortened variant).
__device__ int warp_sum_shared_short(int *sh, int lane) {
  __syncwarp();
  if (lane < warp::lanes / 2) {
    // EXERCISE BEGIN: the same sum with all 16 of these lanes adding at every step (no lane < h
    // test), correct when they run independently.
    COURSE_TODO();
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
