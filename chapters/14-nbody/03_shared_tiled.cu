// SPDX-License-Identifier: BSD-3-Clause
// Stage 03: shared-memory tiles. The CUDA Handbook 14.3, listing 14.4 and table 14.2.
//
// Your task: instead of every warp fetching every body from global memory, let the block bring
// blockDim.x bodies at a time into shared memory, one per thread, and let every thread sum that
// tile from there. The tile belongs to the whole block, and the last one may run past n.
// Watch for: the rate against stage 02 at the same unroll (the book: 45.2e9 against 34.3e9
// interactions/s on its GK104, whose caches did less than today's); in the SASS, which load the
// inner loop now issues; and what the sanitizers say if the tile is not kept safe between threads
// (make check STAGE=exercise/14-nbody/03_shared_tiled runs racecheck on a GPU).
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
    COURSE_TODO();
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
