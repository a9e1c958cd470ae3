// SPDX-License-Identifier: BSD-3-Clause
// Stage 03: the block size as a template parameter, fully unrolled. The CUDA Handbook 12.2,
// listings 12.3 and 12.4.
//
// Changes from stage 02: the kernel is a template on its block size B, and the host picks the
// instantiation for cfg.threads (listing 12.4's switch), so every loop and test on B is decided at
// compile time. The fold (block_reduce<B>) and the switch (dispatch_block_size) are this stage's
// lesson header, lesson_block_reduce.cuh, which stages 04, 05, 07, 09 and 10 reuse.
// What to look for: `make sass-diff A=12-reduction/02_warp_synchronous B=12-reduction/03_templated`
// in reduce_kernel<256>: the fold as a straight line, three BAR.SYNC and no loop counter, then warp
// 0's six LDS -> add -> STS steps. In the progression table, nothing the fold explains.
#include "lesson_block_reduce.cuh"

namespace {

constexpr auto sizes = reduction::block_sizes::powers_of_two;
constexpr int min_threads = 1;

// out[blockIdx.x] = the sum of this block's share of in[0, n), for blocks of exactly B threads.
template <unsigned B>
__global__ void reduce_kernel(int *out, const int *in, std::size_t n) {
  __shared__ int partials[B];
  // EXERCISE BEGIN: stage 02's kernel for a block of exactly B threads, folded by your
  // reduction::block_reduce<B>; thread 0 writes out[blockIdx.x].
  int sum = 0;
  for (std::size_t i = blockIdx.x * std::size_t(B) + threadIdx.x; i < n;
       i += std::size_t(B) * gridDim.x)
    sum += in[i];
  sum = reduction::block_reduce<B>(partials, sum, reduction::plus{});
  if (threadIdx.x == 0) out[blockIdx.x] = sum;
  // EXERCISE END
}

void reduce(int *d_answer, const int *d_in, std::size_t n, const reduction::config &cfg,
            reduction::workspace &ws, cudaStream_t stream) {
  reduction::require_block_size(cfg.threads, sizes, min_threads);
  reduction::dispatch_block_size(cfg.threads, [&](auto b) {
    reduction::two_pass(reduce_kernel<decltype(b)::value>, d_answer, d_in, n, cfg, ws, stream);
  });
}

}  // namespace

REDUCTION_STAGE("block size as a template parameter (12.2, listings 12.3, 12.4)", reduce, sizes,
                min_threads);
