// SPDX-License-Identifier: BSD-3-Clause
// Stage 04: one pass, the last block to finish adds up the partial sums. The CUDA Handbook 12.3,
// listing 12.6 (after the CUDA SDK's threadFenceReduction sample).
//
// Changes from stage 03: one launch instead of two. Each block stores its partial sum, then takes a
// ticket from a retirement counter (atomicAdd); the block with the last ticket reduces the partials
// and resets the counter. Memory ordering takes two fences: the writer's, between its store and its
// ticket (the book's), and the last block's, before it reads (not in the book).
// What to look for: `make sass STAGE=12-reduction/04_single_pass`: a MEMBAR.SC.GPU between the
// partial's store and the ATOMG.E.ADD, a second on the last block's path, the partials read as
// LDG.E.STRONG.GPU. In the timing, the second launch is gone; at large n it does not show.
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
  if (threadIdx.x == 0) {
    block_sums[blockIdx.x] = sum;
    __threadfence();  // this block's sum is visible to every block before its ticket is
    const unsigned ticket = atomicAdd(retired, 1u);
    last_block = ticket == gridDim.x - 1;
    if (last_block)
      __threadfence();  // pairs with the writers' fences: no read below comes before the last
                        // ticket
  }
  __syncthreads();
  if (last_block) {
    int total = 0;
    for (unsigned i = threadIdx.x; i < gridDim.x; i += B) total += __ldcg(&block_sums[i]);
    total = reduction::block_reduce<B>(partials, total, reduction::plus{});
    if (threadIdx.x == 0) {
      *answer = total;
      *retired = 0;  // ready for the next call with this workspace
    }
  }
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
