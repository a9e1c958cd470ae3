// SPDX-License-Identifier: BSD-3-Clause
// Stage 05: warp-shuffle broadcast. The CUDA Handbook 14.5, listing 14.7.
//
// Your task: tiles of 32 bodies, one per lane, kept in registers: each lane loads one body of the
// tile, and the warp then meets the tile's bodies one by one, each broadcast from the lane that
// holds it with a warp shuffle. No shared memory, no barrier. Every shuffle needs all 32 lanes.
// Watch for: the book measured this form 25% slower than shared memory (14.5); does the H200
// agree (stage 05 against 03 in the bench)? In the SASS, count the shuffles per interaction
// against stage 03's shared loads (make sass-count STAGE=exercise/14-nbody/05_warp_shuffle).
#include "nbody_common.cuh"

#include "common/check.h"

namespace {

constexpr unsigned full_mask = 0xffffffffu;

__global__ void shuffle_forces(float4 *force, const float4 *body, std::size_t n, float softening2) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  const unsigned lane = threadIdx.x % 32;
  const float4 me = i < n ? body[i] : make_float4(0.f, 0.f, 0.f, 0.f);
  float fx = 0.f, fy = 0.f, fz = 0.f;
  for (std::size_t t = 0; t < n; t += 32) {
    // EXERCISE BEGIN: add the pull of bodies t .. t + 31 on body i, shared across the warp in
    // registers, not memory.
    COURSE_TODO();
    // EXERCISE END
  }
  if (i < n) force[i] = make_float4(fx, fy, fz, 0.f);
}

void forces(float4 *d_force, const float4 *d_body, std::size_t n, float softening2,
            const nbody::config &cfg, cudaStream_t stream) {
  nbody::require(cfg);
  if (n == 0) return;
  const unsigned blocks = unsigned(nbody::ceil_div(n, std::size_t(cfg.threads)));
  shuffle_forces<<<blocks, cfg.threads, 0, stream>>>(d_force, d_body, n, softening2);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

NBODY_STAGE("warp shuffle broadcast (14.5)", forces, nullptr, false, false);
