// SPDX-License-Identifier: BSD-3-Clause
// Stage 03: the block size as a template parameter. The CUDA Handbook 12.2, listings 12.3 and 12.4.
//
// Your task, in three regions: this kernel, and in the lesson header lesson_block_reduce.cuh the
// block fold and the host switch. Make the block size a compile-time constant B, so that the
// compiler decides every test on it and unrolls every loop of the fold; the host must turn the
// run-time cfg.threads into a kernel compiled for that B (listing 12.4). Stages 04, 05, 07, 09 and
// 10 use your block_reduce and dispatch_block_size as you write them, so they report TODO until
// lesson_block_reduce.cuh is done: do this stage before them.
// Watch for: blocks of 1 to 32 threads (a warp-level barrier may name only lanes that exist), and
// block sizes the stage does not accept (they must be refused, not run).
// Check: `make check STAGE=exercise/12-reduction/03_templated`, then
// `make sass-diff A=12-reduction/02_warp_synchronous B=exercise/12-reduction/03_templated`: where
// did the loop go?
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
  COURSE_TODO();
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
