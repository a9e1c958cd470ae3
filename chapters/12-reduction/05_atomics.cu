// SPDX-License-Identifier: BSD-3-Clause
// Stage 05: one pass, blocks add their sums to the answer with atomicAdd. The CUDA Handbook 12.4.
//
// Changes from stage 04: no partials, no counter, no last block. The host sets the answer to
// zero in the same stream (cudaMemsetAsync) and launches one kernel; thread 0 of every block adds
// the block's sum to it with one atomicAdd. You write both halves: the kernel's atomic and the
// host's zeroing and launch. Integer addition is associative, so the order the atomics land in
// does not change the result (for float it would: the result would vary from run to run in its
// last bits).
// One atomic per block, about a thousand per call, is nothing; one per thread or per element
// would serialise on one address.
// What to look for: in the timing, about the same as stage 04 at 256M (on the H100, 2026-11-23:
// 2283 GB/s at 64 threads against 04's 2279; run A 2281 at 256 against 2270), the fastest of the
// book's stages in both runs, and a memset before the kernel at small n (a second operation in the
// stream): up to 2^18 ints the call takes a near-constant 4.7-7.7 us (run A 4.7-5.7). In the SASS
// of reduce_kernel<256> (committed in sass/sm_90), one
// REDG.E.ADD.STRONG.GPU: the atomic's result is unused, so it is a reduction, not an ATOMG, and no
// fence, no counter, no second fold.
#include "block_reduce.cuh"

namespace {

constexpr auto sizes = reduction::block_sizes::powers_of_two;
constexpr int min_threads = 1;

template <unsigned B>
__global__ void reduce_kernel(int *answer, const int *in, std::size_t n) {
  __shared__ int partials[B];
  int sum = 0;
  for (std::size_t i = blockIdx.x * std::size_t(B) + threadIdx.x; i < n; i += std::size_t(B) * gridDim.x) sum += in[i];
  sum = reduction::block_reduce<B>(partials, sum, reduction::plus{});
  // EXERCISE BEGIN: add the block's sum into *answer, which other blocks add into at the same
  // time. Watch for: which threads hold the block's sum after block_reduce, and how many atomics
  // on one address a call can afford.
  COURSE_TODO();
  // EXERCISE END
}

void reduce(int *d_answer, const int *d_in, std::size_t n, const reduction::config &cfg, reduction::workspace &,
            cudaStream_t stream) {
  reduction::require_block_size(cfg.threads, sizes, min_threads);
  // EXERCISE BEGIN: one launch of reduce_kernel<B> for cfg.threads (your dispatch_block_size)
  // over a grid of reduction::grid_size blocks, with no partials and no counter: the workspace is
  // not used. Watch for: what *d_answer holds before the first block adds into it (the caller
  // poisons it), and that whatever prepares it is ordered before the kernel in `stream`.
  COURSE_TODO();
  // EXERCISE END
}

}  // namespace

REDUCTION_STAGE(COURSE_THIS_STAGE("single pass, atomicAdd of block sums (12.4)"), reduce, sizes, min_threads);
