// SPDX-License-Identifier: BSD-3-Clause
// Stage 04: one pass, with a retirement counter. The CUDA Handbook 12.3, listing 12.6.
//
// Your task: drop stage 03's second launch. Blocks cannot wait for each other, but the last block
// to finish can do the second pass itself, if it can tell that it is the last and if every other
// block's partial sum is visible to it by then. Your region publishes the block's partial sum,
// learns whether this block is the last to finish, and in the last block only folds the partials,
// writes the answer and leaves the workspace ready for the next call.
// Watch for: what another SM sees first, your partial or your ticket, and, in the last block, the
// ticket or the partials it reads (listing 12.6 orders one of these; ask whether the CUDA memory
// model lets you stop there); every thread of the block must learn the verdict; the fold's shared
// array is still in use when the second fold begins. No test and no sanitizer catches a missing
// memory fence reliably: the SASS signature and your reasoning are the guard.
// Check: `make check STAGE=exercise/12-reduction/04_single_pass`, then
// `make sass STAGE=exercise/12-reduction/04_single_pass`: find your orderings in the SASS.
#include "lesson_block_reduce.cuh"

namespace {

constexpr auto sizes = reduction::block_sizes::powers_of_two;
constexpr int min_threads = 1;

template <unsigned B>
__global__ void reduce_kernel(int *answer, int *block_sums, unsigned *retired, const int *in,
                              std::size_t n) {
  __shared__ int partials[B];
  __shared__ bool last_block;
  int sum = 0;
  for (std::size_t i = blockIdx.x * std::size_t(B) + threadIdx.x; i < n;
       i += std::size_t(B) * gridDim.x)
    sum += in[i];
  sum = reduction::block_reduce<B>(partials, sum, reduction::plus{});
  // EXERCISE BEGIN: publish this block's sum and take a ticket from *retired; the block that draws
  // the last ticket writes *answer from every block's sum and leaves *retired ready for the next
  // call.
  COURSE_TODO();
  // EXERCISE END
}

void reduce(int *d_answer, const int *d_in, std::size_t n, const reduction::config &cfg,
            reduction::workspace &ws, cudaStream_t stream) {
  reduction::require_block_size(cfg.threads, sizes, min_threads);
  reduction::dispatch_block_size(cfg.threads, [&](auto b) {
    auto kernel = reduce_kernel<decltype(b)::value>;
    const int blocks = reduction::grid_size(kernel, cfg, n);
    kernel<<<blocks, cfg.threads, 0, stream>>>(d_answer, ws.partials<int>(std::size_t(blocks)),
                                               ws.counter(), d_in, n);
    CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

REDUCTION_STAGE("single pass, __threadfence + retirement counter (12.3)", reduce, sizes,
                min_threads);
