// SPDX-License-Identifier: BSD-3-Clause
// Stage 05: warp shuffle broadcast. The CUDA Handbook 14.5, listing 14.7.
//
// Changes from stage 03: tiles of 32 bodies, one per lane, held in registers and broadcast to the
// warp with __shfl_sync instead of staged in shared memory: no shared memory, no barriers, each
// warp on its own. Four shuffles (x, y, z, mass) per body, where stage 03 reads the body with one
// broadcast LDS.128. The book measured this form 25% slower than shared memory on SM 3.x (34e9
// against 45.2e9 interactions/s) and concluded that shuffle pays only where a kernel needs its
// shared memory for something else. All 32 lanes must take part in every shuffle (the full
// mask), so lanes past n keep looping over the tiles and only skip the store; the tile past n
// holds zero-mass bodies.
// What to look for: in the timing, the book's result holds on the H100: 0.70x of stage 03 at
// N = 128K (2026-11-23: 1.317e12 against 1.871e12 interactions/s, run A the same), and behind it
// at every N from 1K to 256K; in the SASS, four SHFL.IDX per interaction
// beside the 12 FP32 instructions (count them with make sass-count).
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
    // EXERCISE BEGIN: each lane loads body t + lane (nbody::body_or_nothing past n); then for each
    // source lane 0..31 broadcast its x, y, z and mass with __shfl_sync(full_mask, ...) and add
    // that body's pull with nbody::body_body_interaction.
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

void forces(float4 *d_force, const float4 *d_body, std::size_t n, float softening2, const nbody::config &cfg,
            cudaStream_t stream) {
  nbody::require(cfg);
  if (n == 0) return;
  const unsigned blocks = unsigned(nbody::ceil_div(n, std::size_t(cfg.threads)));
  shuffle_forces<<<blocks, cfg.threads, 0, stream>>>(d_force, d_body, n, softening2);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

NBODY_STAGE(COURSE_THIS_STAGE("warp shuffle broadcast (14.5)"), forces, nullptr, false, false);
