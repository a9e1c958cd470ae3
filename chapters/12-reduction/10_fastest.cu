// SPDX-License-Identifier: BSD-3-Clause
// Stage 10: as fast as the memory goes. Beyond the book; measured against CUB DeviceReduce::Sum.
//
// Your task: the load loop of stage 05's single pass, rebuilt for bandwidth. Every stage of the
// book keeps one 4-byte load in flight per thread, and so reads at the rate the memory's latency
// allows for that many bytes in flight, well under its bandwidth (notes.md: why the book's stages
// all read at one rate). Put many more bytes in flight per thread: wider loads, several of them
// issued before the first is used (chapter 11's unrolling), and a grid that fills the GPU once.
// Watch for: an input that does not start on a 16-byte boundary (the tests offset it by 1 to 3
// ints), an n that is no multiple of 4 or of your tile, and reads past in[n - 1] (the input's guard
// changes the answer).
// Check: `make check STAGE=exercise/12-reduction/10_fastest` (your speed against the reference's,
// make lessons CHAPTER=12-reduction says the threshold), then
// `make bench CHAPTER=12-reduction EXERCISE=1` for your row beside CUB's.
#include "block_reduce.cuh"

#include <cstdint>

namespace {

constexpr auto sizes = reduction::block_sizes::powers_of_two;
constexpr int min_threads = 32;
constexpr int U = 4;  // int4 loads in flight per thread

template <unsigned B>
__global__ void reduce_kernel(int *answer, const int *in, std::size_t n) {
  __shared__ int partials[B];
  const std::size_t thread = blockIdx.x * std::size_t(B) + threadIdx.x;
  int sum = 0;
  // EXERCISE BEGIN: add this thread's share of in[0, n) into sum, every element exactly once. Read
  // the body of the input as int4 (16-byte loads need a 16-byte aligned address: the elements
  // before the first boundary and after the last whole int4 are read as ints), each thread with
  // U int4 loads in flight, B apart so a warp's loads stay contiguous, all issued before the first
  // add, over a grid-stride loop. Watch for: the last, partial group of U, and n < 4.
  COURSE_TODO();
  // EXERCISE END
  sum = reduction::block_reduce<B>(partials, sum, reduction::plus{});
  // A grid of one block (small n) stores its total: the host then skips the memset, one launch
  // fewer where launches are the whole cost.
  if (threadIdx.x == 0) {
    if (gridDim.x == 1) *answer = sum;
    else atomicAdd(answer, sum);
  }
}

void reduce(int *d_answer, const int *d_in, std::size_t n, const reduction::config &cfg, reduction::workspace &,
            cudaStream_t stream) {
  reduction::require_block_size(cfg.threads, sizes, min_threads);
  reduction::dispatch_block_size(cfg.threads, [&](auto b) {
    if constexpr (decltype(b)::value >= 32) {
      auto kernel = reduce_kernel<decltype(b)::value>;
      const int blocks = reduction::grid_size(kernel, cfg, n, 4 * U);
      if (blocks > 1) CUDA_CHECK(cudaMemsetAsync(d_answer, 0, sizeof(int), stream));
      kernel<<<blocks, cfg.threads, 0, stream>>>(d_answer, d_in, n);
      CUDA_CHECK_LAUNCH();
    }
  });
}

}  // namespace

REDUCTION_STAGE(COURSE_THIS_STAGE("int4 loads, 64 B in flight per thread, one pass (beyond the book)"), reduce, sizes,
                min_threads);
