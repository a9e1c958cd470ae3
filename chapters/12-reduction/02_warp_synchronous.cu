// SPDX-License-Identifier: BSD-3-Clause
// Stage 02: the last warp folds without block barriers. The CUDA Handbook 12.2, listing 12.2.
//
// Changes from stage 01: the halving steps with __syncthreads() stop at 64 values; warp 0 folds
// those 64 alone, the steps separated by __syncwarp(), which waits only for the 32 lanes of the
// warp. The book's listing relies on the warp moving in lock-step ("warp-synchronous" code, a
// volatile pointer and no barrier at all). Since Volta, lanes of a warp are scheduled
// independently, so that form is a data race: lane 0 may read partials[16] before lane 16 has
// written it (see the chapter README for what racecheck says). Here each step reads slots that
// no lane writes in that step, writes only the lower half, and __syncwarp() publishes the writes
// to the next step. Block sizes: powers of two from 32 (warp 0 must be a whole warp).
// What to look for: in the SASS (`make sass-diff A=12-reduction/01_two_pass
// B=12-reduction/02_warp_synchronous`, committed in sass/sm_90), the same two BAR.SYNC in the code
// as stage 01 (one after the first store, one in the halving loop), but the loop now stops at 64
// values: at B = 256 a block runs 3 barriers instead of 9. The warp tail is written out step by
// step (91 instructions against 63), and each __syncwarp() compiles to a NOP, not a WARPSYNC: in a
// converged warp it costs nothing, and what it does is keep the compiler from moving a step's LDS
// above the previous step's STS. In the timing, no gain: on the H100 (2026-11-23) 2268 GB/s at
// 512 threads against stage 01's 2257, 0.5% above it (run A 2271 at 1024 against 2270); the fold
// is not where the time goes. The 5% that 02 trailed 01 by on 2026-11-22, with the same load
// loop, is gone, so it was not the fold's doing either. Nsight Compute: barrier leaves the top
// three stalls, DRAM goes from 68.3% to 67.5% of peak, the time stays.
#include "reduction_common.cuh"

namespace {

constexpr auto sizes = reduction::block_sizes::powers_of_two;
constexpr int min_threads = 32;

// out[blockIdx.x] = the sum of this block's share of in[0, n); blockDim.x ints of dynamic shared memory.
__global__ void reduce_kernel(int *out, const int *in, std::size_t n) {
  extern __shared__ int partials[];
  int sum = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(blockDim.x) * gridDim.x)
    sum += in[i];
  partials[threadIdx.x] = sum;
  __syncthreads();
  // EXERCISE BEGIN: halve the active threads with __syncthreads() while more than 64 values are
  // left; then warp 0 folds the last 64 (32 if the block has only 32 threads) in steps of
  // 32, 16, 8, 4, 2, 1: lanes below the offset add the slot `offset` above and store, and a
  // __syncwarp() ends each step. Keep the running sum in a register. Thread 0 writes out[blockIdx.x].
  COURSE_TODO();
  // EXERCISE END
}

void reduce(int *d_answer, const int *d_in, std::size_t n, const reduction::config &cfg, reduction::workspace &ws,
            cudaStream_t stream) {
  reduction::require_block_size(cfg.threads, sizes, min_threads);
  reduction::two_pass(reduce_kernel, d_answer, d_in, n, cfg, ws, stream, cfg.threads * sizeof(int));
}

}  // namespace

REDUCTION_STAGE(COURSE_THIS_STAGE("warp-synchronous tail, __syncwarp (12.2)"), reduce, sizes, min_threads);
