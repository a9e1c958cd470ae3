// SPDX-License-Identifier: BSD-3-Clause
// Stage 04: one pass, the last block to finish adds up the partial sums. The CUDA Handbook 12.3,
// listing 12.6.
//
// Changes from stage 03: one kernel launch instead of two. Each block writes its partial sum to
// the workspace, makes the write visible to the whole GPU with __threadfence(), then takes a
// ticket from a retirement counter in global memory (atomicAdd). The block that draws the last
// ticket knows every other partial is written and visible; it reduces them, writes the answer
// and puts the counter back to zero for the next call. The counter lives in the caller's
// workspace: calls in one stream follow each other, so the reset is seen by the next call; calls
// that may overlap (several streams) need a workspace each.
// The last block reads the partials with __ldcg (through L2, not L1): they were written by other
// SMs during this kernel.
// What to look for: in the timing, the second launch and its gap gone (visible at small n, not at
// 256M); in the SASS, MEMBAR.GPU (or MEMBAR.SC.GPU) before the ATOMG, and a second fold in the
// last block.
#include "reduction_common.cuh"

namespace {

constexpr auto sizes = reduction::block_sizes::powers_of_two;
constexpr int min_threads = 1;

template <unsigned B>
__global__ void reduce_kernel(int *answer, int *block_sums, unsigned *retired, const int *in, std::size_t n) {
  __shared__ int partials[B];
  __shared__ bool last_block;
  int sum = 0;
  for (std::size_t i = blockIdx.x * std::size_t(B) + threadIdx.x; i < n; i += std::size_t(B) * gridDim.x) sum += in[i];
  sum = reduction::block_reduce<B>(partials, sum, reduction::plus{});
  // EXERCISE BEGIN: thread 0 stores the block's sum in block_sums[blockIdx.x], fences, and takes
  // a ticket with atomicAdd(retired, 1); the block holding ticket gridDim.x - 1 is the last.
  // Tell the block through shared memory; the last block folds block_sums[0, gridDim.x)
  // (read with __ldcg), writes *answer and resets *retired to 0.
  COURSE_TODO();
  // EXERCISE END
}

void reduce(int *d_answer, const int *d_in, std::size_t n, const reduction::config &cfg, reduction::workspace &ws,
            cudaStream_t stream) {
  reduction::require_block_size(cfg.threads, sizes, min_threads);
  reduction::dispatch_block_size(cfg.threads, [&](auto b) {
    auto kernel = reduce_kernel<decltype(b)::value>;
    const int blocks = reduction::grid_size(kernel, cfg, n);
    kernel<<<blocks, cfg.threads, 0, stream>>>(d_answer, ws.partials<int>(std::size_t(blocks)), ws.counter(), d_in, n);
    CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

REDUCTION_STAGE(COURSE_THIS_STAGE("single pass, __threadfence + retirement counter (12.3)"), reduce, sizes,
                min_threads);
