// SPDX-License-Identifier: BSD-3-Clause
// Stage 05: one pass with atomics. The CUDA Handbook 12.4, listing 12.7.
//
// Your task, in two regions: the kernel's contribution to the answer, and the host side that
// prepares the answer and launches the one kernel. Hardware atomics let every block add into the
// answer directly: no partials, no counter, no last block.
// Watch for: what the answer holds before the first block adds into it (the tests poison it), why
// the kernel cannot prepare it itself (12.4, footnote 2), which threads hold the block's sum after
// block_reduce, and how many atomics on one address a call should make.
// Check: `make check STAGE=exercise/12-reduction/05_atomics`, then
// `make sass STAGE=exercise/12-reduction/05_atomics`: what did your atomicAdd compile to?
#include "lesson_block_reduce.cuh"

namespace {

constexpr auto sizes = reduction::block_sizes::powers_of_two;
constexpr int min_threads = 1;

template <unsigned B>
__global__ void reduce_kernel(int *answer, const int *in, std::size_t n) {
  __shared__ int partials[B];
  int sum = 0;
  for (std::size_t i = blockIdx.x * std::size_t(B) + threadIdx.x; i < n;
       i += std::size_t(B) * gridDim.x)
    sum += in[i];
  sum = reduction::block_reduce<B>(partials, sum, reduction::plus{});
  // EXERCISE BEGIN: add the block's sum into *answer, which every block of the grid adds into.
  COURSE_TODO();
  // EXERCISE END
}

void reduce(int *d_answer, const int *d_in, std::size_t n, const reduction::config &cfg,
            reduction::workspace &, cudaStream_t stream) {
  reduction::require_block_size(cfg.threads, sizes, min_threads);
  // EXERCISE BEGIN: zero *d_answer and launch reduce_kernel<B> for cfg.threads in `stream` (no
  // partials, no counter: the workspace is not used).
  COURSE_TODO();
  // EXERCISE END
}

}  // namespace

REDUCTION_STAGE("single pass, atomicAdd of block sums (12.4)", reduce, sizes, min_threads);
