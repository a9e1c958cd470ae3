// SPDX-License-Identifier: BSD-3-Clause
// Stage 04: one pass, the last block to finish adds up the partial sums. The CUDA Handbook 12.3,
// listing 12.6.
//
// Changes from stage 03: one kernel launch instead of two. Each block stores its partial sum in
// the workspace, then takes a ticket from a retirement counter in global memory (atomicAdd). The
// block that draws the last ticket reduces the partials, writes the answer and puts the counter
// back to zero for the next call. The counter lives in the caller's workspace: calls in one stream
// follow each other, so the reset is seen by the next call; calls that may overlap (several
// streams) need a workspace each.
// Memory ordering takes two fences, one on each side. The ticket promises "every other block has
// stored its partial", but a store and an atomic to other addresses need not become visible to
// another SM in the order they were issued. The writer's __threadfence() between its store and
// its atomicAdd orders partial before ticket (listing 12.6 has this one). The last block needs its
// own, after it has seen the last ticket and before any of its threads reads a partial: without
// it nothing stops those reads from being served early (listing 12.6 has none, and relies on that
// not happening). Here thread 0 fences, and the __syncthreads() that publishes last_block to the
// block carries the ordering to its other threads. The partials are read with __ldcg (through L2,
// not L1, so no line this SM cached earlier is used), but that is a cache hint, not an ordering:
// the fences are what make the reads see the stores.
// What to look for: in the timing, the second launch and its gap gone. At 256M it makes no
// difference: on the H100 (2026-11-23) 2279 GB/s at 256 threads, beside 03's 2255 (run A 2270 at
// 1024, beside 2272); Nsight Compute counts 2 kernels -> 1 and 469.6 -> 469.3 us. Where it should
// show, at small n, the bench does not time this stage. In the SASS of reduce_kernel<256>
// (committed in sass/sm_90), the two fences: a MEMBAR.SC.GPU between the partial's STG and the
// ATOMG.E.ADD, a second after it on the last block's path before its BAR.SYNC, and the last
// block's reads of the partials as LDG.E.STRONG.GPU, then a second copy of the fold.
#include "block_reduce.cuh"

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
