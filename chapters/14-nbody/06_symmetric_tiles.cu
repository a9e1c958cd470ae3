// SPDX-License-Identifier: BSD-3-Clause
// Stage 06: the tiled symmetric formulation. The CUDA Handbook 14.1.1, figures 14.3 and 14.4.
//
// Your task: Newton's third law gives f_ji = -f_ij, so the tiles on and above the diagonal of the
// N x N force matrix hold every pair. A warp owns row tile I (one row body per lane, its sum in
// registers) and a run of column tiles J >= I. Write one 32 x 32 tile: stage its column bodies in
// the warp's slice of shared memory, let every lane meet every column once (lane l meets column
// (l + s) mod 32 at step s, so no two lanes touch one column at once), add each pull to the row
// sum and its opposite to that column's sum, keep the column sums moving through the warp so that
// each ends on its own lane, and add them into force[]. The diagonal tile is brute force.
// Watch for: the book warns that the overhead "tends to swamp the benefit" of half the pairs; the
// bench says whether it does on the H200, at N = 128K and against N (the by_n table). The
// warp's slice of shared memory is reused by every tile of the run: racecheck (make check
// STAGE=exercise/14-nbody/06_symmetric_tiles on a GPU) sees a lane that overwrites it too soon.
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
    COURSE_TODO();
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
