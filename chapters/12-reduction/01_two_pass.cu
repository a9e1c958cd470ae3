// SPDX-License-Identifier: BSD-3-Clause
// Stage 01: two-pass reduction, log-step in shared memory. The CUDA Handbook 12.2, listing 12.1.
//
// The first stage. Each thread sums a grid-stride share of the input in a register, the block
// folds its threads' sums in shared memory in log2(blockDim) halving steps with a __syncthreads()
// between steps, and thread 0 writes the block's partial sum. The same kernel then runs once
// more, as one block over the partial sums (reduction::two_pass), so no block ever waits for
// another. The block size must be a power of two (each step halves the active threads).
// What to look for: in the timing, how close a plain grid-stride loop gets to the read ceiling
// (the fold is a few hundred cycles per block against the whole input's loads). On the H100
// (2026-11-23): 2257 GB/s at 512 threads, 74.1% of the float4 read kernel and 0.746x CUB (run A
// 2270 GB/s at 256 threads, 74.5%). Each thread has one 4-byte load in flight, and Nsight Compute
// counts 91.4 of the 97.7 cycles between a warp's instructions as long_scoreboard, waiting on it.
// In the SASS (`make sass STAGE=12-reduction/01_two_pass`), one BAR.SYNC per halving step, in a
// loop.
#include "reduction_common.cuh"

namespace {

constexpr auto sizes = reduction::block_sizes::powers_of_two;
constexpr int min_threads = 1;

// out[blockIdx.x] = the sum of this block's share of in[0, n); blockDim.x ints of dynamic shared memory.
__global__ void reduce_kernel(int *out, const int *in, std::size_t n) {
  extern __shared__ int partials[];
  // EXERCISE BEGIN: sum a grid-stride share of in[0, n) (a std::size_t index: n may pass 2^31),
  // store it in partials[threadIdx.x], then halve the active threads until one is left,
  // __syncthreads() after every step; thread 0 writes the block's sum to out[blockIdx.x].
  COURSE_TODO();
  // EXERCISE END
}

void reduce(int *d_answer, const int *d_in, std::size_t n, const reduction::config &cfg, reduction::workspace &ws,
            cudaStream_t stream) {
  reduction::require_block_size(cfg.threads, sizes, min_threads);
  reduction::two_pass(reduce_kernel, d_answer, d_in, n, cfg, ws, stream, cfg.threads * sizeof(int));
}

}  // namespace

REDUCTION_STAGE(COURSE_THIS_STAGE("two-pass, log-step in shared memory (12.2, listing 12.1)"), reduce, sizes, min_threads);
