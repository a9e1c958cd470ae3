// SPDX-License-Identifier: BSD-3-Clause
// Stage 01: two passes, a log-step fold in shared memory. The CUDA Handbook 12.2, listing 12.1.
//
// Each thread sums a grid-stride share of the input (coalesced: consecutive threads read
// consecutive ints), the block folds its threads' sums in shared memory in log2(blockDim) halving
// steps with a __syncthreads() after each, and thread 0 writes the block's partial sum. The same
// kernel runs again as one block over the partial sums (reduction::two_pass). Block sizes: powers
// of two.
// What to look for: in the SASS (`make sass STAGE=12-reduction/01_two_pass`), one 4-byte LDG.E per
// trip of the load loop, so one load in flight per thread, and the fold as a loop around one
// BAR.SYNC. In the progression table, how far this loop stays below the read ceiling (notes.md,
// "Why the book's stages read at one rate").
#include "reduction_common.cuh"

namespace {

constexpr auto sizes = reduction::block_sizes::powers_of_two;
constexpr int min_threads = 1;

// out[blockIdx.x] = the sum of this block's share of in[0, n); blockDim.x ints of dynamic shared
// memory.
__global__ void reduce_kernel(int *out, const int *in, std::size_t n) {
  extern __shared__ int partials[];
  // EXERCISE BEGIN: the block's sum of in[0, n), each thread taking a grid-stride share, folded in
  // partials[] and written by thread 0 to out[blockIdx.x].
  int sum = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(blockDim.x) * gridDim.x)
    sum += in[i];
  partials[threadIdx.x] = sum;
  __syncthreads();
  for (unsigned active = blockDim.x / 2; active > 0; active /= 2) {
    if (threadIdx.x < active) partials[threadIdx.x] += partials[threadIdx.x + active];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = partials[0];
  // EXERCISE END
}

void reduce(int *d_answer, const int *d_in, std::size_t n, const reduction::config &cfg,
            reduction::workspace &ws, cudaStream_t stream) {
  reduction::require_block_size(cfg.threads, sizes, min_threads);
  reduction::two_pass(reduce_kernel, d_answer, d_in, n, cfg, ws, stream, cfg.threads * sizeof(int));
}

}  // namespace

REDUCTION_STAGE("two-pass, log-step in shared memory (12.2, listing 12.1)", reduce, sizes,
                min_threads);
