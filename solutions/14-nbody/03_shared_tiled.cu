// SPDX-License-Identifier: BSD-3-Clause
// Stage 03: shared-memory tiles. The CUDA Handbook 14.3, listing 14.4 and table 14.2.
//
// Changes from stage 02: the block stages blockDim.x bodies at a time in shared memory (one
// coalesced load per thread), and every thread sums the tile from there, a broadcast read; two
// barriers per tile. Past the last body the tile holds zero-mass bodies, which add exactly 0. One
// load per thread per tile now serves the whole block.
// What to look for: in the timing, 03 against 02 (vs_prev) and the unroll table; in the SASS,
// LDS.128 instead of LDG.E.128 in the inner loop and two BAR.SYNC per tile; in the profile (`make
// profile-diff A=14-nbody/02_naive_aos B=14-nbody/03_shared_tiled`), the same warp instructions
// with long_scoreboard gone.
#include "nbody_common.cuh"

#include "common/check.h"

namespace {

template <int U>
__global__ void tiled_forces(float4 *force, const float4 *body, std::size_t n, float softening2) {
  extern __shared__ float4 tile[];
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  const float4 me = i < n ? body[i] : make_float4(0.f, 0.f, 0.f, 0.f);
  float fx = 0.f, fy = 0.f, fz = 0.f;
  for (std::size_t t = 0; t < n; t += blockDim.x) {
    // EXERCISE BEGIN: add the pull of this tile of blockDim.x bodies on body i, the block staging
    // the tile in tile[] and sharing it safely (the loop unrolled U times).
    tile[threadIdx.x] = nbody::body_or_nothing(body, t + threadIdx.x, n);
    __syncthreads();
#pragma unroll U
    for (unsigned j = 0; j < blockDim.x; ++j) {
      const float4 other = tile[j];
      nbody::body_body_interaction(fx, fy, fz, me.x, me.y, me.z, other.x, other.y, other.z, other.w,
                                   softening2);
    }
    __syncthreads();
    // EXERCISE END
  }
  if (i < n) force[i] = make_float4(fx, fy, fz, 0.f);
}

void forces(float4 *d_force, const float4 *d_body, std::size_t n, float softening2,
            const nbody::config &cfg, cudaStream_t stream) {
  nbody::require(cfg);
  nbody::dispatch_unroll(cfg.unroll, [&](auto u) {
    if (n == 0) return;
    const unsigned blocks = unsigned(nbody::ceil_div(n, std::size_t(cfg.threads)));
    tiled_forces<decltype(u)::value><<<blocks, cfg.threads, cfg.threads * sizeof(float4), stream>>>(
        d_force, d_body, n, softening2);
    CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

NBODY_STAGE("shared-memory tiles (14.3)", forces, nullptr, true, false);
