// SPDX-License-Identifier: BSD-3-Clause
// Stage 01: two passes, a log-step fold in shared memory. The CUDA Handbook 12.2, listing 12.1.
//
// Your task: the kernel of the first pass. Each thread adds up its share of the input, the threads
// of a block combine their sums in shared memory, and one thread writes the block's sum; the driver
// (reduction::two_pass, given) runs the same kernel again as one block over the blocks' sums, since
// blocks cannot wait for each other. Read 12.1 and figure 12.1 first: which elements a thread reads
// decides whether a warp's loads coalesce, and which slots the threads combine decides whether its
// shared-memory accesses conflict.
// Watch for: n past 2^31 (64-bit indices), n smaller than the grid, every power-of-two block size
// from 1 to 1024, and a barrier that some thread never reaches.
// Check: `make check STAGE=exercise/12-reduction/01_two_pass` (the tests, the sanitizers, the SASS
// signature and the speed against the reference: `make lessons CHAPTER=12-reduction`), then
// `make sass STAGE=exercise/12-reduction/01_two_pass` for the load loop and the barriers.
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
  COURSE_TODO();
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
