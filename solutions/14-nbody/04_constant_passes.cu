// SPDX-License-Identifier: BSD-3-Clause
// Stage 04: bodies in constant memory, in passes. The CUDA Handbook 14.4, listings 14.5 and 14.6.
//
// Changes from stage 03: no shared memory and no barriers. The host copies the bodies into a
// __constant__ array 4000 at a time and launches one pass per chunk; every thread of a warp reads
// the same constant address, the case the constant cache broadcasts. It leaves shared memory free
// for a kernel that needs it (the book: Stone et al.'s Coulomb summation). Not reentrant: the
// __constant__ array is one per GPU.
// What to look for: in the timing, the rate against stage 03 (vs_prev); in the SASS, the bodies
// read by LDC.64 from c[0x3][R + offset], indexed loads, not constant operands; in the profile,
// short_scoreboard as the top stall, and 33 kernels at N = 128K.
#include "nbody_common.cuh"

#include "common/check.h"

#include <algorithm>

namespace {

constexpr int bodies_per_pass = 4000;
__constant__ float4 pass_bodies[bodies_per_pass];

__global__ void constant_pass(float4 *force, const float4 *body, std::size_t n, int count,
                              bool first_pass, float softening2) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(blockDim.x) * gridDim.x) {
    // EXERCISE BEGIN: add the pull of pass_bodies[0, count) on body i into force[i], which the
    // first pass stores.
    const float4 me = body[i];
    float fx = 0.f, fy = 0.f, fz = 0.f;
#pragma unroll 4
    for (int j = 0; j < count; ++j) {
      const float4 other = pass_bodies[j];
      nbody::body_body_interaction(fx, fy, fz, me.x, me.y, me.z, other.x, other.y, other.z, other.w,
                                   softening2);
    }
    if (!first_pass) {
      const float4 before = force[i];
      fx += before.x, fy += before.y, fz += before.z;
    }
    force[i] = make_float4(fx, fy, fz, 0.f);
    // EXERCISE END
  }
}

void forces(float4 *d_force, const float4 *d_body, std::size_t n, float softening2,
            const nbody::config &cfg, cudaStream_t stream) {
  nbody::require(cfg);
  if (n == 0) return;
  const unsigned blocks = unsigned(nbody::ceil_div(n, std::size_t(cfg.threads)));
  for (std::size_t first = 0; first < n; first += bodies_per_pass) {
    const int count = int(std::min<std::size_t>(bodies_per_pass, n - first));
    CUDA_CHECK(cudaMemcpyToSymbolAsync(pass_bodies, d_body + first, count * sizeof(float4), 0,
                                       cudaMemcpyDeviceToDevice, stream));
    constant_pass<<<blocks, cfg.threads, 0, stream>>>(d_force, d_body, n, count, first == 0,
                                                      softening2);
    CUDA_CHECK_LAUNCH();
  }
}

}  // namespace

NBODY_STAGE("constant-memory passes (14.4)", forces, nullptr, false, false);
