// SPDX-License-Identifier: BSD-3-Clause
// Stage 04: bodies in constant memory, in passes. The CUDA Handbook 14.4, listings 14.5 and 14.6.
//
// Changes from stage 03: no shared memory and no barriers. The host copies the bodies into a
// __constant__ array, 4000 at a time (64 KB of constant memory holds 4096 float4; the book keeps
// g_bodiesPerPass = 4000), and launches one pass per chunk; the first pass stores its sums, the
// others add theirs to force[i]. Every thread of a warp reads the same constant address at the
// same time: the case the constant cache broadcasts at full speed.
// Not reentrant: the __constant__ array is one per GPU, so two calls in two streams at once would
// overwrite each other's chunks. The copies are enqueued in `stream`, in order with the passes.
// What to look for: in the timing, slower than stage 03 on the H100, though the operands come
// from the constant cache without an LDS: 0.74x at N = 128K in both runs (2026-11-23: 1.386e12
// against 1.871e12 interactions/s, run A 1.388e12; 0.79x of stage 03 at the same unroll 4, run A
// 0.80x). Not profiled (the 2026-11-23 ncu capture of this chapter ran out of time); the
// candidates are the 33 passes, each a launch with its own partial last wave. In the SASS, FFMAs
// that read c[0x3][...] operands directly, no LDS.
#include "nbody_common.cuh"

#include "common/check.h"

#include <algorithm>

namespace {

constexpr int bodies_per_pass = 4000;
__constant__ float4 pass_bodies[bodies_per_pass];

__global__ void constant_pass(float4 *force, const float4 *body, std::size_t n, int count, bool first_pass,
                              float softening2) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(blockDim.x) * gridDim.x) {
    // EXERCISE BEGIN: sum the pull of pass_bodies[0, count) on body i, then store the sum in
    // force[i] on the first pass and add it to force[i] on the others.
    COURSE_TODO();
    // EXERCISE END
  }
}

void forces(float4 *d_force, const float4 *d_body, std::size_t n, float softening2, const nbody::config &cfg,
            cudaStream_t stream) {
  nbody::require(cfg);
  if (n == 0) return;
  const unsigned blocks = unsigned(nbody::ceil_div(n, std::size_t(cfg.threads)));
  for (std::size_t first = 0; first < n; first += bodies_per_pass) {
    const int count = int(std::min<std::size_t>(bodies_per_pass, n - first));
    CUDA_CHECK(cudaMemcpyToSymbolAsync(pass_bodies, d_body + first, count * sizeof(float4), 0,
                                       cudaMemcpyDeviceToDevice, stream));
    constant_pass<<<blocks, cfg.threads, 0, stream>>>(d_force, d_body, n, count, first == 0, softening2);
    CUDA_CHECK_LAUNCH();
  }
}

}  // namespace

NBODY_STAGE(COURSE_THIS_STAGE("constant-memory passes (14.4)"), forces, nullptr, false, false);
