// SPDX-License-Identifier: BSD-3-Clause
// Stage 04: bodies in constant memory, in passes. The CUDA Handbook 14.4, listings 14.5 and 14.6.
//
// Changes from stage 03: no shared memory and no barriers. The host copies the bodies into a
// __constant__ array, 4000 at a time (64 KB of constant memory holds 4096 float4; the book keeps
// g_bodiesPerPass = 4000), with cudaMemcpyToSymbolAsync device to device, and launches one pass
// per chunk; the first pass stores its sums, the others add theirs to force[i]. Every thread of a
// warp reads the same constant address at the same time: the case the constant cache broadcasts.
// Why: the book takes this form from Stone et al.'s direct Coulomb summation, whose shared memory
// holds other data; it leaves shared memory free for such a kernel.
// Not reentrant: the __constant__ array is one per GPU, so two calls in two streams at once would
// overwrite each other's chunks. The copies are enqueued in `stream`, in order with the passes.
// What to look for: in the timing, the rate against stage 03 (vs_prev); in the SASS, the bodies
// read by LDC.64 from c[0x3][R + offset], two per body: j is known only at run time, so these are
// indexed loads, not constant operands of the FFMAs; in the profile, short_scoreboard as the top
// stall (stage 03, with the same MUFU.RSQ, hardly waits there: the change is the loads), and 33
// kernels at N = 128K, each reading and writing the forces.
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
    const float4 me = body[i];
    float fx = 0.f, fy = 0.f, fz = 0.f;
#pragma unroll 4
    for (int j = 0; j < count; ++j) {
      const float4 other = pass_bodies[j];
      nbody::body_body_interaction(fx, fy, fz, me.x, me.y, me.z, other.x, other.y, other.z, other.w, softening2);
    }
    if (!first_pass) {
      const float4 before = force[i];
      fx += before.x, fy += before.y, fz += before.z;
    }
    force[i] = make_float4(fx, fy, fz, 0.f);
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
