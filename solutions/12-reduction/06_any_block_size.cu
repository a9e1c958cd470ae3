// SPDX-License-Identifier: BSD-3-Clause
// Stage 06: any block size, not only powers of two. The CUDA Handbook 12.5, listing 12.8.
//
// Changes from stage 01 (compare with that stage): before the halving steps the block folds itself
// down to the largest power of two that fits: at blockDim.x = 100, threads 64..99 add into slots
// 0..35, then the usual steps run on 64 values. The occupancy calculator or a register count may
// make 96, 192 or 640 threads the best choice.
// What to look for: `make sass-diff A=12-reduction/01_two_pass B=12-reduction/06_any_block_size`: a
// FLO.U32 (for __clz), one extra guarded LDS/add/STS and BAR.SYNC before the loop. In the timing,
// nothing lost at a power of two; the odd block sizes are tested, not timed.
#include "reduction_common.cuh"

namespace {

constexpr auto sizes = reduction::block_sizes::any;
constexpr int min_threads = 1;

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
  // EXERCISE BEGIN: leave the block's sum in partials[0] for any blockDim.x from 1 to 1024.
  const unsigned p = 1u << (31 - __clz(blockDim.x));
  if (p != blockDim.x) {
    if (threadIdx.x >= p) partials[threadIdx.x - p] += partials[threadIdx.x];
    __syncthreads();
  }
  for (unsigned active = p / 2; active > 0; active /= 2) {
    if (threadIdx.x < active) partials[threadIdx.x] += partials[threadIdx.x + active];
    __syncthreads();
  }
  // EXERCISE END
  if (threadIdx.x == 0) out[blockIdx.x] = partials[0];
}

void reduce(int *d_answer, const int *d_in, std::size_t n, const reduction::config &cfg,
            reduction::workspace &ws, cudaStream_t stream) {
  reduction::require_block_size(cfg.threads, sizes, min_threads);
  reduction::two_pass(reduce_kernel, d_answer, d_in, n, cfg, ws, stream, cfg.threads * sizeof(int));
}

}  // namespace

REDUCTION_STAGE("any block size (12.5, listing 12.8)", reduce, sizes, min_threads);
