// SPDX-License-Identifier: BSD-3-Clause
// Stage 01: the host reference. The CUDA Handbook 14.2, listing 14.2 (ComputeGravitation_AOS).
//
// host_forces_aos is the book's CPU code: for each body, the sum over every body of
// body_body_interaction<float> (nbody_common.cuh, the one function the GPU stages call too),
// single-threaded, AOS: the "scalar" row of the CPU table. host_forces_f64 is its float64 twin,
// on all cores, which every test and the benchmark compare against; beside each force it returns
// the sum of the magnitudes of the terms, sum_j |f_ij|, the scale that the float32 error is
// measured against (a force that nearly cancels has a tiny magnitude but the rounding of large
// terms: relative error against |f| alone would be meaningless there).
#pragma once

#include "nbody.h"
#include "nbody_common.cuh"

#include "common/parallel.h"

#include <cmath>
#include <cstddef>
#include <vector>

namespace nbody {

// Listing 14.2, float, one thread.
inline void host_forces_aos(float4 *force, const float4 *body, std::size_t n, float softening2) {
  for (std::size_t i = 0; i < n; ++i) {
    float fx = 0.f, fy = 0.f, fz = 0.f;
    for (std::size_t j = 0; j < n; ++j)
      body_body_interaction(fx, fy, fz, body[i].x, body[i].y, body[i].z, body[j].x, body[j].y,
                            body[j].z, body[j].w, softening2);
    force[i] = float4{fx, fy, fz, 0.f};
  }
}

struct force64 {
  double x = 0, y = 0, z = 0;
  double scale = 0;  // sum over j of |f_ij|
};

// Row i in float64.
inline force64 host_force_f64(const float4 *body, std::size_t n, std::size_t i, double softening2) {
  force64 f;
  const double x0 = body[i].x, y0 = body[i].y, z0 = body[i].z;
  for (std::size_t j = 0; j < n; ++j) {
    double fx = 0, fy = 0, fz = 0;
    body_body_interaction<double>(fx, fy, fz, x0, y0, z0, body[j].x, body[j].y, body[j].z,
                                  body[j].w, softening2);
    f.x += fx, f.y += fy, f.z += fz;
    f.scale += std::sqrt(fx * fx + fy * fy + fz * fz);
  }
  return f;
}

// Every row in float64, on all cores.
inline std::vector<force64> host_forces_f64(const float4 *body, std::size_t n, float softening2) {
  std::vector<force64> f(n);
  // parallel_for splits only large ranges; rows are expensive, so give it rows x 2^16 "elements".
  const std::size_t grain = std::size_t(1) << 16;
  course::parallel_for(n * grain, [&](std::size_t b, std::size_t e, unsigned) {
    for (std::size_t i = (b + grain - 1) / grain; i < (e + grain - 1) / grain; ++i)
      f[i] = host_force_f64(body, n, i, softening2);
  });
  return f;
}

// The error of a float32 force against the float64 reference: |f - ref| / sum_j |f_ij|.
inline double relative_error(const float4 &got, const force64 &want) {
  const double dx = got.x - want.x, dy = got.y - want.y, dz = got.z - want.z;
  const double err = std::sqrt(dx * dx + dy * dy + dz * dz);
  return want.scale > 0 ? err / want.scale : err;
}

// The bound the tests and the benchmark hold every float32 stage to: float32 rounding of each
// term (rsqrtf: 2 ulp, so about 6e-7 for r^-3) plus a sum of n terms whose rounding error grows
// like sqrt(n) in practice (listing 14.2 in float: worst 2e-6 at n = 4097, 3.4e-6 at 16384):
// 1e-5 + 2e-7 sqrt(n) (n = 4097: 2.3e-5; n = 131072: 8.2e-5). One body left out of the sums
// moves nine forces in ten by more than that for every n <= 4097 (test_host.cpp checks it).
inline double error_bound(std::size_t n) { return 1e-5 + 2e-7 * std::sqrt(double(n)); }

// |a - b| / sum_j |f_ij| (plain |a - b| where the scale is 0: one body alone), for comparing two
// float32 results with each other.
inline double relative_difference(const float4 &a, const float4 &b, const force64 &want) {
  const double dx = double(a.x) - b.x, dy = double(a.y) - b.y, dz = double(a.z) - b.z;
  const double d = std::sqrt(dx * dx + dy * dy + dz * dz);
  return want.scale > 0 ? d / want.scale : d;
}

}  // namespace nbody
