// SPDX-License-Identifier: BSD-3-Clause
// Stage 04: bodies in constant memory, in passes. The CUDA Handbook 14.4, listings 14.5 and 14.6.
//
// Your task: the host below copies the bodies into the __constant__ array pass_bodies, 4000 at a
// time, and launches one pass per chunk. Write one pass: every body's force gains the pull of
// the chunk's bodies, read from constant memory; the forces must end as the sum over all passes.
// Watch for: the rate against stage 03, which read its bodies from shared memory; in the SASS, how
// the bodies come out of constant memory when the index is known only at run time; in the
// profile (make profile-diff A=14-nbody/03_shared_tiled B=14-nbody/04_constant_passes), what the
// warps wait on.
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
    COURSE_TODO();
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
