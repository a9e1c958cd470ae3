// SPDX-License-Identifier: BSD-3-Clause
// Stage 04: one pass, the last block to finish adds up the partial sums. The CUDA Handbook 12.3,
// listing 12.6 (after the CUDA SDK's threadFenceReduction sample).
//
// Changes from stage 03: one kernel launch instead of two. Each block stores its partial sum in the
// workspace, then takes a ticket from a retirement counter in global memory (atomicAdd). The block
// that draws the last ticket reduces the partials, writes the answer and puts the counter back to
// zero for the next call. The counter lives in the caller's workspace, not in a __device__ global
// as in the book: calls in one stream follow each other, so the reset is seen by the next call;
// calls that may overlap (several streams) need a workspace each.
// Memory ordering takes two fences, one on each side. The ticket promises "every other block has
// stored its partial", but a store and an atomic to other addresses need not become visible to
// another SM in the order they were issued. The writer's __threadfence() between its store and its
// atomicAdd orders partial before ticket (listing 12.6 has this one). The last block needs its own,
// after it has seen the last ticket and before any of its threads reads a partial: without it
// nothing stops those reads from being served early (listing 12.6 has none, and relies on that not
// happening, which the CUDA memory model does not promise). Here thread 0 fences, and the
// __syncthreads() that publishes last_block to the block carries the ordering to its other threads.
// The partials are read with __ldcg (through L2, not L1, so no line this SM cached earlier is
// used), but that is a cache hint, not an ordering: the fences are what make the reads see the
// stores.
// What to look for: in the SASS of reduce_kernel<256>
// (`make sass STAGE=12-reduction/04_single_pass`), the two fences: a MEMBAR.SC.GPU between the
// partial's store and the ATOMG.E.ADD, a second one on the last block's path, then the last block's
// reads of the partials as LDG.E.STRONG.GPU and a second copy of the fold. In the timing, the
// second launch is gone; at the benchmark's size the saving does not show beside the loads, and
// Nsight Compute counts one kernel instead of two.
#include "lesson_block_reduce.cuh"

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
  // EXERCISE BEGIN: publish this block's sum in block_sums[blockIdx.x] and take a ticket from
  // *retired; the block that draws the last of gridDim.x tickets folds block_sums[0, gridDim.x)
  // (with your block_reduce), writes *answer and leaves *retired ready for the next call.
  // Watch for: the order in which other SMs see the partial and the ticket (and, in the last block,
  // the ticket and the reads of the partials): each side needs its own ordering, and a cache hint
  // is not one; every thread of the block must learn whether it is the last, and partials[] is
  // still in use by the first fold when the second one starts.
  if (threadIdx.x == 0) {
    block_sums[blockIdx.x] = sum;
    __threadfence();  // this block's sum is visible to every block before its ticket is
    const unsigned ticket = atomicAdd(retired, 1u);
    last_block = ticket == gridDim.x - 1;
    if (last_block) __threadfence();  // pairs with the writers' fences: no read below comes before the last ticket
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
