// SPDX-License-Identifier: BSD-3-Clause
// Stage 09: the block's fold with warp shuffles. The CUDA Handbook 12.8.
//
// Changes from stage 03 (compare with that stage): no shared-memory halving steps. Five
// __shfl_xor_sync exchanges (the butterfly of figure 12.2) leave every lane with its warp's sum;
// lane 0 of each warp writes it to shared memory, one __syncthreads(), and warp 0 folds those the
// same way. The book's __shfl_xor() took no mask; the _sync form names the lanes taking part.
// What to look for: `make sass-diff A=12-reduction/03_templated B=12-reduction/09_shuffle`:
// SHFL.BFLY where 03 has LDS/STS pairs, one BAR.SYNC where 03 has three at B = 256. In the timing,
// again little: the fold is not the bottleneck.
#include "lesson_block_reduce.cuh"

namespace {

constexpr auto sizes = reduction::block_sizes::powers_of_two;
constexpr int min_threads = 32;

// EXERCISE BEGIN: define __device__ int warp_sum(int v): the sum of v over a full warp's 32 lanes,
// in every lane, exchanged in registers.
__device__ int warp_sum(int v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}
// EXERCISE END

// out[blockIdx.x] = the sum of this block's share of in[0, n), for blocks of exactly B threads.
template <unsigned B>
__global__ void reduce_kernel(int *out, const int *in, std::size_t n) {
  __shared__ int warp_sums[B / 32];
  int sum = 0;
  for (std::size_t i = blockIdx.x * std::size_t(B) + threadIdx.x; i < n;
       i += std::size_t(B) * gridDim.x)
    sum += in[i];
  // EXERCISE BEGIN: the block's sum in out[blockIdx.x]: each warp folds its values with your
  // warp_sum, then the warps' sums are combined.
  sum = warp_sum(sum);
  if constexpr (B > 32) {
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) warp_sums[warp] = sum;
    __syncthreads();
    if (warp == 0) sum = warp_sum(lane < B / 32 ? warp_sums[lane] : 0);
  }
  if (threadIdx.x == 0) out[blockIdx.x] = sum;
  // EXERCISE END
}

void reduce(int *d_answer, const int *d_in, std::size_t n, const reduction::config &cfg,
            reduction::workspace &ws, cudaStream_t stream) {
  reduction::require_block_size(cfg.threads, sizes, min_threads);
  reduction::dispatch_block_size_from<min_threads>(cfg.threads, [&](auto b) {
    reduction::two_pass(reduce_kernel<decltype(b)::value>, d_answer, d_in, n, cfg, ws, stream);
  });
}

}  // namespace

REDUCTION_STAGE("warp shuffle, __shfl_xor_sync (12.8)", reduce, sizes, min_threads);
