// SPDX-License-Identifier: BSD-3-Clause
// Stage 06: any block size, not only powers of two. The CUDA Handbook 12.5, listing 12.8.
//
// Your task: stage 01's fold for a block of any size from 1 to 1024. Halving works only on a power
// of two, so 12.5 first brings the block's values down to the largest power of two that fits, then
// halves as before. Compare with stage 01, not 05: 12.5 changes listing 12.1.
// Why want it: the occupancy calculator, or a kernel's register count, may make 96, 192 or 640
// threads per block the best choice.
// Watch for: a block that already is a power of two, and a barrier some thread never reaches.
// Check: `make check STAGE=exercise/12-reduction/06_any_block_size` (the tests run 33, 96, 100 and
// 1000 threads among others, the sweep more), then
// `make sass-diff A=12-reduction/01_two_pass B=exercise/12-reduction/06_any_block_size`.
#include "reduction_common.cuh"

namespace {

constexpr auto sizes = reduction::block_sizes::any;
constexpr int min_threads = 1;

// out[blockIdx.x] = the sum of this block's share of in[0, n); blockDim.x ints of dynamic shared
// memory.
__global__ void reduce_kernel(int *out, const int *in, std::size_t n) {
  extern __shared__ int partials[];
  int sum = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(blockDim.x) * gridDim.x)
    sum += in[i];
  partials[threadIdx.x] = sum;
  __syncthreads();
  // EXERCISE BEGIN: leave the block's sum in partials[0] for any blockDim.x from 1 to 1024.
  COURSE_TODO();
  // EXERCISE END
  if (threadIdx.x == 0) out[blockIdx.x] = partials[0];
}

void reduce(int *d_answer, const int *d_in, std::size_t n, const reduction::config &cfg,
            reduction::workspace &ws, cudaStream_t stream) {
  reduction::require_block_size(cfg.threads, sizes, min_threads);
  reduction::two_pass(reduce_kernel, d_answer, d_in, n, cfg, ws, stream, cfg.threads * sizeof(int));
}

}  // namespace

REDUCTION_STAGE("any block size (12.5, listing 12.8)", reduce, sizes, min_threads);
