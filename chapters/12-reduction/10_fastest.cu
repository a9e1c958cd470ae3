// SPDX-License-Identifier: BSD-3-Clause
// Stage 10: as fast as the memory goes. Beyond the book; measured against CUB DeviceReduce::Sum.
//
// Your task: the load loop of stage 05's single pass (the fold after it is given), rebuilt for
// bandwidth. Every stage of the book keeps one 4-byte load in flight per thread, and so reads at
// the rate the memory's latency allows for that many bytes in flight, well under its bandwidth
// (notes.md: why the book's stages all read at one rate). Put many more bytes in flight per
// thread: wider loads, several of them issued before the first is used (chapter 11's unrolling),
// and a grid that fills the GPU once.
// Watch for: an input that does not start on a 16-byte boundary (the tests offset it by 1 to 3
// ints), an n that is no multiple of 4 or of your tile, and reads past in[n - 1] (the input's guard
// changes the answer). Your loop must be right at every block size: for a small n the given host
// code launches one block cut down to the input, as small as 32 threads.
// Check: `make check STAGE=exercise/12-reduction/10_fastest` (your speed against the reference's,
// make lessons CHAPTER=12-reduction says the threshold), then
// `make bench CHAPTER=12-reduction EXERCISE=1` for your row beside CUB's.
#include "lesson_block_reduce.cuh"

#include <cstdint>

namespace {

constexpr auto sizes = reduction::block_sizes::powers_of_two;
constexpr int min_threads = 32, max_threads = 1024;
constexpr int U = 4;                       // int4 loads in flight per thread
constexpr std::size_t per_thread = 4 * U;  // ints a thread takes per tile

// Every lane of a full warp returns the sum of v over the warp's 32 lanes. From SM 8.0 that is one
// instruction, REDUX.SUM (__reduce_add_sync), where stage 09's five shuffles each wait for the
// last; before SM 8.0 it is stage 09's shuffles.
__device__ int warp_sum(int v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  return __reduce_add_sync(0xffffffffu, v);
#else
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
#endif
}

// A grid of blocks of exactly B threads adds this block's share of in[0, n) into *answer; a grid
// of one block stores its total instead (the answer needs no zeroing first).
template <unsigned B>
__global__ void reduce_kernel(int *answer, const int *in, std::size_t n) {
  __shared__ int warp_sums[B / 32];
  const std::size_t thread = blockIdx.x * std::size_t(B) + threadIdx.x;
  int sum = 0;
  // EXERCISE BEGIN: add this thread's share of in[0, n) into sum, every element exactly once, with
  // 16-byte loads and several of them in flight per thread.
  COURSE_TODO();
  // EXERCISE END
  // The fold: each warp's sum, one barrier, then thread 0 adds the B / 32 warp sums (a few shared
  // loads and adds: shorter than a second warp_sum, on a path a small n waits for end to end).
  sum = warp_sum(sum);
  if constexpr (B > 32) {
    if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = sum;
    __syncthreads();
    if (threadIdx.x == 0) {
      sum = 0;
#pragma unroll
      for (unsigned w = 0; w < B / 32; ++w) sum += warp_sums[w];
    }
  }
  if (threadIdx.x == 0) {
    if (gridDim.x == 1) *answer = sum;
    else atomicAdd(answer, sum);
  }
}

void reduce(int *d_answer, const int *d_in, std::size_t n, const reduction::config &cfg,
            reduction::workspace &, cudaStream_t stream) {
  reduction::require_block_size(cfg.threads, sizes, min_threads);
  if (cfg.blocks == 0 && n <= per_thread * std::size_t(max_threads)) {
    // One tile: one block, halved while half as many threads still cover n, stores its total. No
    // memset, no occupancy query, no atomic: the call is this one launch. Its size comes from n,
    // not from cfg.threads (the block size of the grid for large n), as CUB's single-tile kernel
    // has its own: at 4096 ints, 256 threads whatever the caller tuned the large n for.
    int threads = max_threads;
    while (threads > min_threads && n <= per_thread * std::size_t(threads / 2)) threads /= 2;
    reduction::dispatch_block_size_from<min_threads>(threads, [&](auto b) {
      reduce_kernel<decltype(b)::value><<<1, decltype(b)::value, 0, stream>>>(d_answer, d_in, n);
      CUDA_CHECK_LAUNCH();
    });
    return;
  }
  reduction::dispatch_block_size_from<min_threads>(cfg.threads, [&](auto b) {
    auto kernel = reduce_kernel<decltype(b)::value>;
    const int blocks = reduction::grid_size(kernel, cfg, n, per_thread);
    if (blocks > 1) CUDA_CHECK(cudaMemsetAsync(d_answer, 0, sizeof(int), stream));
    kernel<<<blocks, cfg.threads, 0, stream>>>(d_answer, d_in, n);
    CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

REDUCTION_STAGE("int4 loads, 64 B in flight per thread, one pass (beyond the book)", reduce, sizes,
                min_threads);
