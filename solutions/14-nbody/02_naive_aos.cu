// SPDX-License-Identifier: BSD-3-Clause
// Stage 02: the naive GPU kernel, AOS. The CUDA Handbook 14.2, listing 14.3 and table 14.1.
//
// Changes from the host reference (listing 14.2, host_nbody.h): one thread per body i sums the pull
// of every body j, read straight from global memory. A warp reads the same body at once, so one
// 16-byte load serves it and L1 serves the other warps: the kernel pays instruction issue and the
// wait for each load, not bandwidth. The j loop is unrolled U times, table 14.1's sweep.
// What to look for: in the bench's unroll table, the rate from U = 1 to 32; in the SASS, one
// LDG.E.128 per interaction beside 3 FADD, 3 FMUL, 6 FFMA and one MUFU.RSQ; in the profile (`make
// profile STAGE=14-nbody/02_naive_aos`), long_scoreboard as the top stall.
#include "nbody_common.cuh"

#include "common/check.h"

namespace {

template <int U>
__global__ void naive_forces(float4 *force, const float4 *body, std::size_t n, float softening2) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(blockDim.x) * gridDim.x) {
    // EXERCISE BEGIN: force[i] from the pull of every body j on body i, the j loop unrolled U
    // times.
    const float4 me = body[i];
    float fx = 0.f, fy = 0.f, fz = 0.f;
#pragma unroll U
    for (std::size_t j = 0; j < n; ++j) {
      const float4 other = body[j];
      nbody::body_body_interaction(fx, fy, fz, me.x, me.y, me.z, other.x, other.y, other.z, other.w,
                                   softening2);
    }
    force[i] = make_float4(fx, fy, fz, 0.f);
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
