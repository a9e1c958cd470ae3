// SPDX-License-Identifier: BSD-3-Clause
// Stage 08: counting the elements that meet a predicate, with votes. The CUDA Handbook 12.7.
//
// Your task, in two regions: count the elements with in[i] > threshold twice, once with warp votes
// and once with the block-wide vote. A predicate is one bit, so a warp can reduce 32 of them in two
// instructions, and a block barrier can count its threads' predicates as it waits (12.7: the
// intrinsics SM 2.0 added; the book gives no listing). Blocks are combined as in stage 05.
// Watch for: the book's __ballot() takes no mask; today's _sync form names the lanes taking part,
// and all of them must reach it; a block vote is also a barrier, so every thread must reach it the
// same number of times, including threads whose element lies past n.
// Check: `make check STAGE=exercise/12-reduction/08_predicate`, then
// `make sass STAGE=exercise/12-reduction/08_predicate`: the vote and the counting barrier.
#include "reduction_common.cuh"

namespace {

constexpr auto sizes = reduction::block_sizes::multiples_of_32;
constexpr int min_threads = 32;

__global__ void count_ballot_kernel(unsigned long long *count, const int *in, std::size_t n,
                                    int threshold) {
  __shared__ unsigned warp_counts[32];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  // EXERCISE BEGIN: count the elements with in[i] > threshold, a warp vote per 32 elements, and add
  // the block's count to *count with one atomic.
  COURSE_TODO();
  // EXERCISE END
}

__global__ void count_syncthreads_kernel(unsigned long long *count, const int *in, std::size_t n,
                                         int threshold) {
  // EXERCISE BEGIN: the same count with the block-wide vote __syncthreads_count, and one atomic per
  // block.
  COURSE_TODO();
  // EXERCISE END
}

void count_greater(unsigned long long *d_count, const int *d_in, std::size_t n, int threshold,
                   bool use_syncthreads_count, const reduction::config &cfg, reduction::workspace &,
                   cudaStream_t stream) {
  reduction::require_block_size(cfg.threads, sizes, min_threads);
  CUDA_CHECK(cudaMemsetAsync(d_count, 0, sizeof(*d_count), stream));
  auto kernel = use_syncthreads_count ? count_syncthreads_kernel : count_ballot_kernel;
  kernel<<<reduction::grid_size(kernel, cfg, n), cfg.threads, 0, stream>>>(d_count, d_in, n,
                                                                           threshold);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

REDUCTION_STAGE("count a predicate: __ballot_sync + __popc, __syncthreads_count (12.7)", nullptr,
                sizes, min_threads, nullptr, count_greater);
