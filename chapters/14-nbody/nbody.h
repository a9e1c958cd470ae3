// SPDX-License-Identifier: BSD-3-Clause
// Chapter 14, N-body: the types and the entry point every stage implements, so one test file, one
// benchmark and the simulation driver cover them all.
//
// Bodies are AOS float4 (x, y, z, mass), as in the book. A force stage writes, for every body i,
//   force[i] = sum over j of mass_j * (r_j - r_i) / (|r_j - r_i|^2 + softening^2)^(3/2)
// into (x, y, z) and 0 into w: the acceleration of body i with G = 1 (the book's "force").
// The softening must be > 0: it makes the self-interaction j == i contribute exactly 0. Masses
// are >= 0 (stage 08 scales by m^(-1/2)).
#pragma once

#include "common/random.h"
#include "common/stage.h"

#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace nbody {

struct config {
  int threads = 256;  // per block: 32..1024, a multiple of 32 (stage 06: fixed by the stage)
  int unroll = 4;     // stages 02, 03: the unroll factor of the inner loop, 1, 2, 4, 8, 16 or 32;
                      // stages 07, 08: 8, 16 or 32 (others: 8)
  int rows_per_thread = 0;  // stages 07, 08: bodies per thread, 1, 2, 4 or 8; 0: the stage's choice
  int parts = 0;            // stage 10: row parts, dealt round-robin to the GPUs; 0: one per GPU
  int gpus = 0;             // stage 10: how many visible GPUs to use; 0: all
};

// Single-GPU stages: d_force[0, n) from d_body[0, n), device pointers, work enqueued on `stream`.
using force_fn = void (*)(float4 *d_force, const float4 *d_body, std::size_t n, float softening2,
                          const config &cfg, cudaStream_t stream);
// Stage 10: h_force[0, n) from h_body[0, n), both in portable pinned host memory; returns with
// the forces in h_force.
using host_force_fn = void (*)(float4 *h_force, const float4 *h_body, std::size_t n,
                               float softening2, const config &cfg);

struct stage {
  course::stage_info info;
  force_fn forces = nullptr;            // single-GPU stages
  host_force_fn forces_host = nullptr;  // stage 10
  bool unroll_sweep = false;            // honours config::unroll (tables 14.1 and 14.2)
  bool blocked = false;                 // honours config::rows_per_thread
};

inline bool supports_threads(int threads) {
  return threads >= 32 && threads <= 1024 && threads % 32 == 0;
}
inline bool supports_unroll(int u) {
  return u == 1 || u == 2 || u == 4 || u == 8 || u == 16 || u == 32;
}

// The deterministic random start of the tests, the benchmark and the driver: positions uniform
// in the cube [-1, 1]^3, masses uniform in [0.5, 1.5].
inline std::vector<float4> random_bodies(std::size_t n, std::uint64_t seed) {
  std::vector<float4> b(n);
  for (std::size_t i = 0; i < n; ++i)
    b[i] = float4{course::random_float(seed, 4 * i), course::random_float(seed, 4 * i + 1),
                  course::random_float(seed, 4 * i + 2),
                  course::random_float(seed, 4 * i + 3, 0.5f, 1.5f)};
  return b;
}

// The 20-flop convention the course uses to quote GFLOP/s beside the rate (the book reports
// interactions/s only; 14.1 counts about 20 single-precision flops per interaction), and the
// FP32-pipe instructions one interaction costs in listing 14.1's form (3 FADD, 3 FFMA/FMUL for
// the squared distance, 3 FMUL for mass / r^3, 3 FFMA for the sums) besides one MUFU.RSQ: the
// ceiling is the measured FMA rate / 12.
constexpr double flops_per_interaction = 20;
constexpr double fp32_instructions_per_interaction = 12;
// Stage 08's mass-scaled form: 9 FFMA + 2 FMUL (no FADD, no mass multiply) besides the MUFU.RSQ,
// so its own bound is the measured FMA rate / 11 (the benchmark reports both).
constexpr double mass_scaled_fp32_instructions_per_interaction = 11;

// Leapfrog (kick-drift-kick) on the host: v += a dt/2; x += v dt; a = forces(x); v += a dt/2.
// `accel` holds the forces of the current positions on entry and of the new ones on return.
template <class Forces>
void leapfrog_step(std::vector<float4> &body, std::vector<float4> &vel, std::vector<float4> &accel,
                   float dt, Forces &&forces) {
  const std::size_t n = body.size();
  const float h = 0.5f * dt;
  for (std::size_t i = 0; i < n; ++i) {
    vel[i].x += h * accel[i].x, vel[i].y += h * accel[i].y, vel[i].z += h * accel[i].z;
    body[i].x += dt * vel[i].x, body[i].y += dt * vel[i].y, body[i].z += dt * vel[i].z;
  }
  forces(accel, body);
  for (std::size_t i = 0; i < n; ++i)
    vel[i].x += h * accel[i].x, vel[i].y += h * accel[i].y, vel[i].z += h * accel[i].z;
}

// Total momentum sum m_i v_i (float64), and the scale sum m_i |v_i| its drift is measured against.
struct momentum {
  double x = 0, y = 0, z = 0, scale = 0;
};
inline momentum total_momentum(const std::vector<float4> &body, const std::vector<float4> &vel) {
  momentum p;
  for (std::size_t i = 0; i < body.size(); ++i) {
    const double m = body[i].w;
    p.x += m * vel[i].x, p.y += m * vel[i].y, p.z += m * vel[i].z;
    p.scale += m * std::sqrt(double(vel[i].x) * vel[i].x + double(vel[i].y) * vel[i].y +
                             double(vel[i].z) * vel[i].z);
  }
  return p;
}

}  // namespace nbody

// NBODY_STAGE("title (14.2)", forces, forces_host, ...);  registers the stage compiled in this
// file; its id is the build's COURSE_STAGE_ID.
#define NBODY_STAGE(title, ...)                                                       \
  static course::registrar<nbody::stage> COURSE_CONCAT(course_registrar_, __LINE__) { \
    nbody::stage { COURSE_THIS_STAGE(title), __VA_ARGS__ }                            \
  }
