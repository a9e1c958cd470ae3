// SPDX-License-Identifier: BSD-3-Clause
// Stage 10: as fast as the memory goes. Beyond the book; measured against CUB DeviceReduce::Sum.
//
// Changes from stage 05 (compare with that stage): the same single pass (one atomicAdd per block
// into an answer the host zeroed; a single block stores its total instead), with the loads
// rebuilt for bandwidth:
//   - 16-byte loads: the input is read as int4, a quarter of the load instructions for the
//     same bytes (a pointer that is not 16-byte aligned starts with up to 3 scalar elements, and
//     the last n % 4 elements after the last whole int4 are read as ints);
//   - U = 4 int4 per thread issued back to back before any is added (chapter 11's unrolling):
//     64 bytes in flight per thread, 128 KB per SM with 2048 resident threads, far more than the
//     bandwidth-latency product of HBM needs;
//   - as many blocks as fit on the GPU at once and no more, so every block streams for the whole
//     kernel and the per-block fold and atomic happen once per SM-slot, not per tile.
// What to look for: in the SASS, LDG.E.128 four in a row before the IADDs; in the timing, the
// ratio to CUB in the progression table (the goal is 0.98x or better) and the throughput-vs-n
// table, where at small n launches are the whole cost: a grid of one block stores its total, so
// the host skips the memset there.
// Measured on the H100 (2026-11-23): 3103 GB/s at 512 threads, 1.025x CUB DeviceReduce::Sum and
// 101.9% of the float4 read kernel (run A 3107 GB/s, 1.028x, 102.0%); interleaved with CUB,
// 1.02-1.04x aligned, 1.01-1.03x at an odd n and 1.15-1.19x with the input offset by one int (two
// runs). Nsight Compute against 09: DRAM 68.5% -> 93.7% of peak, 128 -> 512 bytes per load
// request, 67.5M -> 11.4M warp instructions. Against CUB at every n from 2^10 to 2^28 (goal
// >= 1.00x) it is met at 18 of 19 sizes and MISSED at n = 4096 in both runs: 0.969x (run A
// 0.949x), 4.35 us against CUB's 4.22 (run A 4.03), both the fixed cost of a call, the pairs
// ranging 0.81-1.21x (run A 0.80-2.06x). With the grid of one block skipping the occupancy
// query (reduction::grid_size), run C: 4.32 us against 4.22, 0.978x: still MISSED, launch-bound.
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
  // EXERCISE BEGIN: split in[0, n) into a scalar head (up to the first 16-byte boundary, at most
  // 3 ints), n4 whole int4s, and a scalar tail (n4 ints past the head, fewer than 4). Threads
  // with a small global index take the head and tail elements. Then each thread loads U int4s
  // B apart, all before adding any, striding by U * B * gridDim.x, and finishes its last partial
  // group with a bounds check per int4. Sum the four lanes of every int4.
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
