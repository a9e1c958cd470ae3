// SPDX-License-Identifier: BSD-3-Clause
// Stage 08: the interaction in mass-scaled coordinates. Beyond the book: stage 07's kernel with 11
// FP32-pipe instructions per interaction instead of listing 14.1's 12.
//
// Changes from stage 07: the tile holds each body as a (x, y, z) with a = m^(-1/2), and e^2 / m
// beside it, so the mass leaves the inner loop. That form, and its derivation, is this stage's
// lesson header, lesson_mass_scaled.cuh (your code; stage 11 runs it too); the kernel and blocking
// are stage 07's (lesson_register_blocked.cuh, your code). The price: body i's pull on itself is no
// longer 0, so the diagonal tiles mask j == i. The FP32 pipe is the roof: fewer instructions is the
// only way up.
// What to look for: `make sass-diff A=14-nbody/07_register_blocked B=14-nbody/08_mass_scaled`: FFMA
// x9, FMUL x2, MUFU.RSQ x1 and no FADD per interaction. In the timing, a gain smaller than 12 / 11;
// the profile says where the rest goes (profiles.md).
#include "lesson_mass_scaled.cuh"

#include "common/check.h"

namespace {

constexpr int default_rows_per_thread = 4;
constexpr int default_threads = 128;

void forces(float4 *d_force, const float4 *d_body, std::size_t n, float softening2,
            const nbody::config &cfg, cudaStream_t stream) {
  nbody::require(cfg);
  const int R = cfg.rows_per_thread ? cfg.rows_per_thread : default_rows_per_thread;
  // The stage's own block size unless asked for one of those it is compiled for (128 or 256).
  const int threads = (cfg.threads == 128 || cfg.threads == 256) ? cfg.threads : default_threads;
  nbody::dispatch_blocking(R, threads, cfg.unroll, [&](auto r, auto b, auto u) {
    constexpr int RR = decltype(r)::value, B = decltype(b)::value, U = decltype(u)::value;
    using Form = mass_scaled_form;
    const std::size_t row_blocks = nbody::ceil_div(n, std::size_t(RR) * B);
    const int split = n ? nbody::column_split(n, row_blocks, B) : 1;
    nbody::launch_register_blocked<Form, RR, B, U>(d_force, d_body, n, 0, n, split, softening2,
                                                   stream);
  });
}

}  // namespace

NBODY_STAGE("register-blocked tiles, mass-scaled coordinates (beyond the book)", forces, nullptr,
            false, true);
