// SPDX-License-Identifier: BSD-3-Clause
// Stage 09: the block's fold with warp shuffles. The CUDA Handbook 12.8.
//
// Changes from stage 03 (compare with that stage): no shared-memory halving steps. Within a warp,
// __shfl_xor_sync(mask, v, offset) hands each lane the register v of lane (lane ^ offset):
// five exchanges (offsets 16, 8, 4, 2, 1) leave every lane holding the warp's sum, with no shared
// memory and no barrier. Then lane 0 of each warp writes the warp's sum to shared memory, one
// __syncthreads(), and warp 0 folds those (at most 32) sums the same way. The book's __shfl_xor()
// took no mask; it was removed in CUDA 9 in favour of the _sync form, whose mask says which lanes
// take part (all 32 here: block sizes are powers of two from 32).
// What to look for: in the SASS, SHFL.BFLY instead of LDS/STS pairs in the fold, and one
// BAR.SYNC instead of log2(B); in the timing, again little, since the fold is not the bottleneck:
// on the H100 (2026-11-23) 2266 GB/s at 1024 threads against 03's 2255 (run A 2280 against 2272).
// Nsight Compute (against 07): shared-memory bank conflicts 642 -> 158, DRAM 67.4% -> 68.5%.
#include "block_reduce.cuh"

namespace {

constexpr auto sizes = reduction::block_sizes::powers_of_two;
constexpr int min_threads = 32;

// EXERCISE BEGIN: define __device__ int warp_sum(int v), which returns the warp's sum of v in
// every lane: five __shfl_xor_sync steps (offsets 16, 8, 4, 2, 1) over the full warp.
COURSE_TODO();
// EXERCISE END

// out[blockIdx.x] = the sum of this block's share of in[0, n), for blocks of exactly B threads.
template <unsigned B>
__global__ void reduce_kernel(int *out, const int *in, std::size_t n) {
  __shared__ int warp_sums[B / 32];
  int sum = 0;
  for (std::size_t i = blockIdx.x * std::size_t(B) + threadIdx.x; i < n; i += std::size_t(B) * gridDim.x) sum += in[i];
  // EXERCISE BEGIN: fold each warp with warp_sum; if the block has more than one warp, lane 0 of
  // each warp stores its sum in warp_sums[warp], __syncthreads(), and warp 0 folds warp_sums
  // (lanes past B / 32 bring 0). Thread 0 writes out[blockIdx.x].
  COURSE_TODO();
  // EXERCISE END
}

void reduce(int *d_answer, const int *d_in, std::size_t n, const reduction::config &cfg, reduction::workspace &ws,
            cudaStream_t stream) {
  reduction::require_block_size(cfg.threads, sizes, min_threads);
  reduction::dispatch_block_size(cfg.threads, [&](auto b) {
    if constexpr (decltype(b)::value >= 32)
      reduction::two_pass(reduce_kernel<decltype(b)::value>, d_answer, d_in, n, cfg, ws, stream);
  });
}

}  // namespace

REDUCTION_STAGE(COURSE_THIS_STAGE("warp shuffle, __shfl_xor_sync (12.8)"), reduce, sizes, min_threads);
