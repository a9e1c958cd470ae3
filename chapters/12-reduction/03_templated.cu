// SPDX-License-Identifier: BSD-3-Clause
// Stage 03: the block size as a template parameter, fully unrolled. The CUDA Handbook 12.2,
// listings 12.3 and 12.4.
//
// Changes from stage 02: the kernel is a template on its block size B, and the host picks the
// instantiation for cfg.threads with a switch over the powers of two 1..1024
// (reduction::dispatch_block_size). Every loop bound and every "if (B >= ...)" in the fold is then
// known to the compiler: the loops unroll, dead steps disappear, the shared array has a static
// size, and the grid stride is a constant times gridDim. The fold itself is
// reduction::block_reduce<B> in reduction_common.cuh (stage 02's fold written for a compile-time
// B, also used by stages 04, 05, 07 and 10): read it there. Blocks of fewer than 32 threads work too:
// the warp tail's __syncwarp() mask names only the lanes that exist.
// What to look for: in the SASS of one instantiation (`make sass STAGE=12-reduction/03_templated`),
// a straight line of LDS/IADD/STS with no loop counter in the fold; in the timing, next to no
// change: the fold was never the bottleneck (the book measured the same).
#include "reduction_common.cuh"

namespace {

constexpr auto sizes = reduction::block_sizes::powers_of_two;
constexpr int min_threads = 1;

// out[blockIdx.x] = the sum of this block's share of in[0, n), for blocks of exactly B threads.
template <unsigned B>
__global__ void reduce_kernel(int *out, const int *in, std::size_t n) {
  __shared__ int partials[B];
  // EXERCISE BEGIN: the grid-stride sum of stage 02 with B in place of blockDim.x, then
  // reduction::block_reduce<B>(partials, sum, reduction::plus{}); thread 0 writes the result.
  COURSE_TODO();
  // EXERCISE END
}

void reduce(int *d_answer, const int *d_in, std::size_t n, const reduction::config &cfg, reduction::workspace &ws,
            cudaStream_t stream) {
  reduction::require_block_size(cfg.threads, sizes, min_threads);
  reduction::dispatch_block_size(cfg.threads, [&](auto b) {
    reduction::two_pass(reduce_kernel<decltype(b)::value>, d_answer, d_in, n, cfg, ws, stream);
  });
}

}  // namespace

REDUCTION_STAGE(COURSE_THIS_STAGE("block size as a template parameter (12.2, listing 12.3)"), reduce, sizes, min_threads);
