// SPDX-License-Identifier: BSD-3-Clause
// Stage 06: the tiled symmetric formulation. The CUDA Handbook 14.1.1, figures 14.3 and 14.4.
//
// Changes from stage 05: Newton's third law. Only the 32 x 32 tiles on and above the diagonal are
// computed; at step s lane l meets column (l + s) mod 32, and the column sums travel from lane to
// lane by __shfl_sync. Several warps add into the same bodies, so the sums go to `force` with
// atomicAdd (the last bits vary from run to run). Half the pairs, each dearer: the book warns that
// "the overhead tends to swamp the benefit".
// What to look for: in the timing, whether half the pairs pay for the extra work (N^2 / time, at
// 128K and in the by_n table); in the SASS, 3 SHFL.IDX per pair and REDG.E.ADD.F32 per tile; in the
// profile, MUFU halved against stage 05 and the shared loads' wavefronts.
#include "nbody_common.cuh"

#include "common/check.h"

namespace {

constexpr unsigned full_mask = 0xffffffffu;
constexpr int warps_per_block = 4;
constexpr std::size_t tiles_per_warp =
    8;  // column tiles per warp: row sums stay in registers for 8 tiles

__global__ void __launch_bounds__(32 * warps_per_block)
    symmetric_forces(float4 *force, const float4 *body, std::size_t n, float softening2) {
  __shared__ float4 columns[warps_per_block][32];
  float4 *col = columns[threadIdx.x / 32];
  const unsigned lane = threadIdx.x % 32;
  const std::size_t tiles = nbody::ceil_div(n, 32), chunks = nbody::ceil_div(tiles, tiles_per_warp);
  const std::size_t w = (blockIdx.x * std::size_t(blockDim.x) + threadIdx.x) / 32;
  const std::size_t I = w / chunks, first = I + (w % chunks) * tiles_per_warp;
  if (I >= tiles || first >= tiles) return;  // the whole warp: the run lies past the last tile
  const std::size_t last = first + tiles_per_warp < tiles ? first + tiles_per_warp : tiles;
  const std::size_t i = I * 32 + lane;
  const float4 me = nbody::body_or_nothing(body, i, n);
  float fx = 0.f, fy = 0.f, fz = 0.f;
  for (std::size_t J = first; J < last; ++J) {
    // EXERCISE BEGIN: the pairs of row tile I and column tile J, each computed once: the row
    // body's acceleration into the row sums, the column body's into force[] of column J's bodies
    // (the diagonal tile: rows only).
    const std::size_t j = J * 32 + lane;
    __syncwarp();  // the previous tile's columns are no longer read
    col[lane] = nbody::body_or_nothing(body, j, n);
    __syncwarp();
    if (J == I) {  // diagonal tile: brute force, rows only
#pragma unroll 8
      for (unsigned s = 0; s < 32; ++s) {
        const float4 o = col[(lane + s) % 32];
        nbody::body_body_interaction(fx, fy, fz, me.x, me.y, me.z, o.x, o.y, o.z, o.w, softening2);
      }
      continue;
    }
    float ax = 0.f, ay = 0.f, az = 0.f;  // at step s: the sum of column (lane + s) mod 32
#pragma unroll 8
    for (unsigned s = 0; s < 32; ++s) {
      const float4 o = col[(lane + s) % 32];
      const float dx = o.x - me.x, dy = o.y - me.y, dz = o.z - me.z;
      const float inv = nbody::reciprocal_sqrt(dx * dx + (dy * dy + (dz * dz + softening2)));
      const float inv3 = inv * inv * inv;
      const float si = o.w * inv3, sj = me.w * inv3;
      fx += dx * si, fy += dy * si, fz += dz * si;
      ax -= dx * sj, ay -= dy * sj, az -= dz * sj;
      const unsigned next = (lane + 1) % 32;
      ax = __shfl_sync(full_mask, ax, next);
      ay = __shfl_sync(full_mask, ay, next);
      az = __shfl_sync(full_mask, az, next);
    }
    if (j < n) {
      atomicAdd(&force[j].x, ax);
      atomicAdd(&force[j].y, ay);
      atomicAdd(&force[j].z, az);
    }
    // EXERCISE END
  }
  if (i < n) {
    atomicAdd(&force[i].x, fx);
    atomicAdd(&force[i].y, fy);
    atomicAdd(&force[i].z, fz);
  }
}

void forces(float4 *d_force, const float4 *d_body, std::size_t n, float softening2,
            const nbody::config &cfg, cudaStream_t stream) {
  nbody::require(cfg);  // the block size is the stage's own (4 warps); cfg.threads is only checked
  if (n == 0) return;
  CUDA_CHECK(cudaMemsetAsync(d_force, 0, n * sizeof(float4), stream));
  const std::size_t tiles = nbody::ceil_div(n, 32);
  const std::size_t warps = tiles * nbody::ceil_div(tiles, tiles_per_warp);
  const unsigned blocks = unsigned(nbody::ceil_div(warps, warps_per_block));
  symmetric_forces<<<blocks, 32 * warps_per_block, 0, stream>>>(d_force, d_body, n, softening2);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

NBODY_STAGE("symmetric warp tiles (14.1.1)", forces, nullptr, false, false);
