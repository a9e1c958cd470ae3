// SPDX-License-Identifier: BSD-3-Clause
// Stage 02: the naive GPU kernel, AOS. The CUDA Handbook 14.2, listing 14.3 and table 14.1.
//
// Your task: one GPU thread per body i sums the pull of every body j on it (listing 14.1's
// interaction, nbody::body_body_interaction) and stores the force; the bodies are read straight
// from global memory, as float4 (x, y, z, mass). Unroll the j loop by the template argument U:
// the book sweeps the unroll factor in table 14.1 and finds it worth 37%.
// Watch for: how the rate moves with U (make bench CHAPTER=14-nbody EXERCISE=1, the unroll
// table), and which body the 32 threads of a warp load at the same moment: it decides whether
// memory matters to this kernel (make sass STAGE=exercise/14-nbody/02_naive_aos).
#include "nbody_common.cuh"

#include "common/check.h"

namespace {

template <int U>
__global__ void naive_forces(float4 *force, const float4 *body, std::size_t n, float softening2) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(blockDim.x) * gridDim.x) {
    // EXERCISE BEGIN: force[i] from the pull of every body j on body i, the j loop unrolled U
    // times.
    COURSE_TODO();
    // EXERCISE END
  }
}

void forces(float4 *d_force, const float4 *d_body, std::size_t n, float softening2,
            const nbody::config &cfg, cudaStream_t stream) {
  nbody::require(cfg);
  nbody::dispatch_unroll(cfg.unroll, [&](auto u) {
    if (n == 0) return;
    const unsigned blocks = unsigned(nbody::ceil_div(n, std::size_t(cfg.threads)));
    naive_forces<decltype(u)::value>
        <<<blocks, cfg.threads, 0, stream>>>(d_force, d_body, n, softening2);
    CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

NBODY_STAGE("naive AOS, unrolled (14.2)", forces, nullptr, true, false);
