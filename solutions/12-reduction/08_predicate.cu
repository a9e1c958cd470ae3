// SPDX-License-Identifier: BSD-3-Clause
// Stage 08: counting the elements that meet a predicate, with votes. The CUDA Handbook 12.7.
//
// A count of in[i] > threshold, not a sum. 12.7 describes the intrinsics and gives no listing: the
// two kernels are the course's. One warp counts its 32 predicates with __ballot_sync() and
// __popc(); the other kernel uses the block-wide __syncthreads_count(). Blocks combine as in stage
// 05 (one atomicAdd each). Block sizes: multiples of 32. The book's __ballot() took no mask and no
// longer compiles for compute_70 and later.
// What to look for: in the SASS, VOTE.ANY and POPC in the ballot kernel's loop against one
// BAR.RED.POPC in the other's. In the progression table, how little the block barrier per element
// costs next to the ballot, and how both counts trail the sums (profiles.md).
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
  unsigned warp_count = 0;  // the same in every lane
  for (std::size_t base = blockIdx.x * std::size_t(blockDim.x) + warp * 32; base < n;
       base += std::size_t(blockDim.x) * gridDim.x) {
    const std::size_t i = base + lane;
    warp_count += __popc(__ballot_sync(0xffffffffu, i < n && in[i] > threshold));
  }
  if (lane == 0) warp_counts[warp] = warp_count;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long block_count = 0;
    for (unsigned w = 0; w < blockDim.x / 32; ++w) block_count += warp_counts[w];
    atomicAdd(count, block_count);
  }
  // EXERCISE END
}

__global__ void count_syncthreads_kernel(unsigned long long *count, const int *in, std::size_t n,
                                         int threshold) {
  // EXERCISE BEGIN: the same count with the block-wide vote __syncthreads_count, and one atomic per
  // block.
  unsigned long long block_count = 0;
  for (std::size_t base = blockIdx.x * std::size_t(blockDim.x); base < n;
       base += std::size_t(blockDim.x) * gridDim.x) {
    const std::size_t i = base + threadIdx.x;
    block_count += __syncthreads_count(i < n && in[i] > threshold);
  }
  if (threadIdx.x == 0) atomicAdd(count, block_count);
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
