// SPDX-License-Identifier: BSD-3-Clause
// Stage 05: one pass, blocks add their sums into the answer with atomicAdd. The CUDA Handbook 12.4,
// listing 12.7.
//
// Changes from stage 04: no partials, no counter, no last block. The host zeroes the answer in the
// same stream and launches one kernel; thread 0 of each block adds the block's sum with one
// atomicAdd. No block can zero the answer itself: none knows it runs first (12.4). The book's
// listing has every thread add; this stage keeps the fold, one atomic per block.
// What to look for: `make sass STAGE=12-reduction/05_atomics`: one REDG.E.ADD.STRONG.GPU (the
// result is unused, so a reduction, not an ATOMG), no fence, no second fold. In the timing, stage
// 04's rate at the benchmark's size; at small n a call is a memset and a launch.
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
  if (threadIdx.x == 0) atomicAdd(answer, sum);
  // EXERCISE END
}

void reduce(int *d_answer, const int *d_in, std::size_t n, const reduction::config &cfg,
            reduction::workspace &, cudaStream_t stream) {
  reduction::require_block_size(cfg.threads, sizes, min_threads);
  // EXERCISE BEGIN: zero *d_answer and launch reduce_kernel<B> for cfg.threads in `stream` (no
  // partials, no counter: the workspace is not used).
  CUDA_CHECK(cudaMemsetAsync(d_answer, 0, sizeof(int), stream));
  reduction::dispatch_block_size(cfg.threads, [&](auto b) {
    auto kernel = reduce_kernel<decltype(b)::value>;
    kernel<<<reduction::grid_size(kernel, cfg, n), cfg.threads, 0, stream>>>(d_answer, d_in, n);
    CUDA_CHECK_LAUNCH();
  });
  // EXERCISE END
}

}  // namespace

REDUCTION_STAGE("single pass, atomicAdd of block sums (12.4)", reduce, sizes, min_threads);
