// SPDX-License-Identifier: BSD-3-Clause
// Stage 08: the interaction in mass-scaled coordinates. Beyond the book: stage 07's kernel with
// another interaction form (11 FP32-pipe instructions instead of listing 14.1's 12).
//
// Your task: stage 07's kernel (lesson_register_blocked.cuh, your code) is at listing 14.1's 12
// FP32 instructions per interaction, and the FP32 pipe is the roof. Scale each source body j by a =
// m_j^(-1/2): with d' = a (r_j - r_i), d' (|d'|^2 + a^2 e^2)^(-3/2) equals m_j (r_j - r_i) (|r_j -
// r_i|^2 + e^2)^(-3/2), so the mass leaves the inner loop (the comment on mass_scaled_form in
// this stage's lesson header, lesson_mass_scaled.cuh, derives it, and its price; stage 11 runs
// the form too). Write the form there: how a body is staged in the tile (a zero mass must
// add exactly 0, with no division by 0), the interaction in 9 FFMA, 2 FMUL and one MUFU.RSQ, and
// which tiles mask j == i. Watch for: no FADD left in the inner loop (make sass-diff
// A=14-nbody/07_register_blocked B=exercise/14-nbody/08_mass_scaled); the tests put heavy bodies
// all over a block's rows, so a body left unmasked fails them; and the gain over stage 07 in the
// bench's blocking table, against the 12 / 11 the instruction count promises.
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
