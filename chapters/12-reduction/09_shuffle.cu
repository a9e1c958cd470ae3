// SPDX-License-Identifier: BSD-3-Clause
// Stage 09: the block's fold with warp shuffles. The CUDA Handbook 12.8.
//
// Your task, in two regions: a warp's sum computed in registers, and the block's fold built on it.
// SM 3.0's shuffle lets the lanes of a warp read each other's registers, so a warp can add up its
// 32 values with no shared memory and no barrier (12.8 and figure 12.2: the butterfly); shared
// memory is then needed only to bring the warps' sums together. Compare with stage 03.
// Watch for: the book's __shfl_xor takes no mask; today's _sync form names the lanes taking part,
// and all of them must reach it; which lanes hold the result; a block of a single warp.
// Check: `make check STAGE=exercise/12-reduction/09_shuffle`, then
// `make sass-diff A=12-reduction/03_templated B=exercise/12-reduction/09_shuffle`: the
// shared-memory round trips and the barriers that are gone.
#include "lesson_block_reduce.cuh"

namespace {

constexpr auto sizes = reduction::block_sizes::powers_of_two;
constexpr int min_threads = 32;

// EXERCISE BEGIN: define __device__ int warp_sum(int v): the sum of v over a full warp's 32 lanes,
// in every lane, exchanged in registers.
COURSE_TODO();
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
  COURSE_TODO();
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
