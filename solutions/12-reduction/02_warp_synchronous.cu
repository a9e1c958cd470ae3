// SPDX-License-Identifier: BSD-3-Clause
// Stage 02: the last warp folds without block barriers. The CUDA Handbook 12.2, listing 12.2.
//
// Changes from stage 01: the halving steps with __syncthreads() stop at 64 values; warp 0 folds
// those alone, its steps separated by __syncwarp(). The book's volatile, barrier-free form relies
// on lock-step warps, which Volta's independent scheduling ended: it is a data race (notes.md, "The
// warp-synchronous tail on today's GPUs"). Block sizes: powers of two from 32.
// What to look for: `make sass-diff A=12-reduction/01_two_pass B=12-reduction/02_warp_synchronous`:
// 3 block barriers instead of 9 at B = 256, the warp tail written out step by step, each
// __syncwarp() a NOP (it keeps the compiler from moving a step's LDS above the previous STS). In
// the progression table, no gain over 01: the fold is not where the time goes.
#include "reduction_common.cuh"

namespace {

constexpr auto sizes = reduction::block_sizes::powers_of_two;
constexpr int min_threads = 32;

// out[blockIdx.x] = the sum of this block's share of in[0, n); blockDim.x ints of dynamic shared
// memory.
__global__ void reduce_kernel(int *out, const int *in, std::size_t n) {
  extern __shared__ int partials[];
  int sum = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(blockDim.x) * gridDim.x)
    sum += in[i];
  partials[threadIdx.x] = sum;
  __syncthreads();
  // EXERCISE BEGIN: the block's sum in out[blockIdx.x], its last 64 values folded by warp 0 alone,
  // with no block barrier.
  for (unsigned active = blockDim.x / 2; active >= 64; active /= 2) {
    if (threadIdx.x < active) partials[threadIdx.x] = sum = sum + partials[threadIdx.x + active];
    __syncthreads();
  }
  if (threadIdx.x < 32) {
    const unsigned lane = threadIdx.x;
    if (blockDim.x >= 64) {
      partials[lane] = sum = sum + partials[lane + 32];
      __syncwarp();
    }
    if (lane < 16) partials[lane] = sum = sum + partials[lane + 16];
    __syncwarp();
    if (lane < 8) partials[lane] = sum = sum + partials[lane + 8];
    __syncwarp();
    if (lane < 4) partials[lane] = sum = sum + partials[lane + 4];
    __syncwarp();
    if (lane < 2) partials[lane] = sum = sum + partials[lane + 2];
    __syncwarp();
    if (lane < 1) out[blockIdx.x] = sum + partials[lane + 1];
  }
  // EXERCISE END
}

void reduce(int *d_answer, const int *d_in, std::size_t n, const reduction::config &cfg,
            reduction::workspace &ws, cudaStream_t stream) {
  reduction::require_block_size(cfg.threads, sizes, min_threads);
  reduction::two_pass(reduce_kernel, d_answer, d_in, n, cfg, ws, stream, cfg.threads * sizeof(int));
}

}  // namespace

REDUCTION_STAGE("warp-synchronous tail, __syncwarp (12.2)", reduce, sizes, min_threads);
