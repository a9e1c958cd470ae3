// SPDX-License-Identifier: BSD-3-Clause
// Stage 02: the last warp without block barriers. The CUDA Handbook 12.2, listing 12.2.
//
// Your task: stage 01's fold, except that once 64 values are left, warp 0 finishes alone, and its
// steps wait only for its own lanes, not for the whole block. The book writes this tail with no
// barrier at all, trusting the warp to move in lock-step (12.2's note asks for a volatile pointer);
// since Volta the lanes of a warp are scheduled independently, so your tail must itself order each
// step's stores before the next step's loads, for the lanes of warp 0 only.
// Watch for: a step must never read a slot that another lane writes in the same step; blocks of
// exactly 32 threads; racecheck's verdict in `make check` (a race between lanes that the plain
// tests may not see).
// Check: `make check STAGE=exercise/12-reduction/02_warp_synchronous`, then
// `make sass-diff A=12-reduction/01_two_pass B=exercise/12-reduction/02_warp_synchronous`: how many
// barriers a block now runs, and what your warp-level ordering compiled to.
#include "reduction_common.cuh"

namespace {

constexpr auto sizes = reduction::block_sizes::powers_of_two;
constexpr int min_threads = 32;

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
  // EXERCISE BEGIN: the block's sum in out[blockIdx.x], its last 64 values folded by warp 0 alone,
  // with no block barrier.
  COURSE_TODO();
  // EXERCISE END
}

void reduce(int *d_answer, const int *d_in, std::size_t n, const reduction::config &cfg,
            reduction::workspace &ws, cudaStream_t stream) {
  reduction::require_block_size(cfg.threads, sizes, min_threads);
  reduction::two_pass(reduce_kernel, d_answer, d_in, n, cfg, ws, stream, cfg.threads * sizeof(int));
}

}  // namespace

REDUCTION_STAGE("warp-synchronous tail, __syncwarp (12.2)", reduce, sizes, min_threads);
