// SPDX-License-Identifier: BSD-3-Clause
// Stage 05: warp-shuffle broadcast. The CUDA Handbook 14.5, listing 14.7.
//
// Changes from stage 03: tiles of 32 bodies, one per lane, held in registers and broadcast to the
// warp with __shfl_sync instead of staged in shared memory: no shared memory, no barriers. Four
// shuffles per body where stage 03 has one LDS.128. Every lane must take part (the full mask), so
// lanes past n keep looping and only skip the store. The book measured it 25% slower than 03.
// What to look for: in the timing, 05's rate against 03's; in the SASS, four SHFL.IDX per
// interaction beside the 12 FP32 instructions (`make sass-count STAGE=14-nbody/05_warp_shuffle`);
// in the profile, the warp instructions per interaction against 03's.
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
    const float4 mine = nbody::body_or_nothing(body, t + lane, n);
#pragma unroll 8
    for (int src = 0; src < 32; ++src) {
      const float x = __shfl_sync(full_mask, mine.x, src), y = __shfl_sync(full_mask, mine.y, src),
                  z = __shfl_sync(full_mask, mine.z, src), m = __shfl_sync(full_mask, mine.w, src);
      nbody::body_body_interaction(fx, fy, fz, me.x, me.y, me.z, x, y, z, m, softening2);
    }
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
