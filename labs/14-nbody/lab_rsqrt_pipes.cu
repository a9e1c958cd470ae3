// SPDX-License-Identifier: BSD-3-Clause
// Lab: where stage 08's reciprocal square roots go. Beyond the book: stage 08's kernel (R = 4,
// B = 256, U = 16, its column split) with the same mass-scaled interaction, the roots placed
// otherwise.
//
// Why: per instruction, stage 08's MUFU.RSQ holds most of the warps' stall samples, nearly all of
// the mio_throttle ones and half the dispatch stalls (chapters/14-nbody/profiles.md; notes.md "Why
// stage 08 stops"). ptxas groups the four rows' MUFU.RSQ of a source a few instructions apart; the
// XU takes a warp's MUFU in several cycles, so the warps reach it in bursts and queue, while it is
// only half busy on average. Three ways out, each a template argument of one form, so that one
// benchmark run measures them side by side with stage 08 (bench_nbody.cpp, table
// "lab_rsqrt_pipes"):
//   (a) Every = k: one interaction in k takes x^(-3/2) on the FMA pipe (rsqrt_cubed_fma,
//       lab_rsqrt_pipes.h: an integer seed and a higher-order Newton step, 2 integer and 8 FP32
//       instructions in place of one MUFU.RSQ and 2 FMUL), so the XU gets 1 - 1/k of the roots and
//       the FP32 pipe the rest: k = 16, 8, 4, 2. It costs 7 issue slots per such interaction (12.4
//       for the others): it pays only if the MUFU queue costs stage 08 more than that.
//   (b) Order = spread: every root a MUFU.RSQ, the loop written software-pipelined: at each step
//       the differences and squared distance of interaction k, the MUFU.RSQ of k - 1 (inline PTX
//       rsqrt.approx.ftz.f32, volatile, so the PTX keeps the order) and the cube and sums of
//       k - 2. ptxas schedules the SASS on its own and groups the MUFU.RSQ again (the sm_90
//       cubin read by opcode: gaps of 1 to 8 instructions, as stage 08's); spread_fenced adds a
//       __syncwarp() after each step, which ptxas turns into runs of NOPs (issue slots for
//       nothing) without spacing the MUFU.RSQ: kept so the bench shows what that costs.
//   (c) Order = chained: the order ptxas must keep is a data dependency. Each squared distance
//       gets + 0 * (the previous root), one FFMA whose 0 comes from shared memory (ptxas cannot
//       fold it; the result is exact), so each MUFU.RSQ waits for the one before it: in the
//       sm_90 cubin the gaps become 9 to 22 instructions, the MUFU.RSQ evenly spread, for one
//       more issue slot per interaction (13.4 instead of 12.4). A warp's chain of 64 roots per
//       trip is far shorter than the trip's issue time shared by 8 warps, so the wait itself
//       costs nothing. chained_pairs links every second root only (+1/2 slot). If chained runs
//       at stage 08's rate or better despite its extra 8% of instructions, the MUFU grouping is
//       what costs stage 08 issue cycles, and a form that spaces them for free would gain.
//   And (a) with (b): k = 8 in the spread order; (a) with (c): k = 16, chained.
// Every variant computes the same forces as stage 08 to rounding (the tests hold them to the
// chapter's bound, test_lab_rsqrt_pipes.cpp).
// What to look for: in the bench's table, each variant's interactions/s against stage 08 in the
// same run and the 2.3e12 goal; in the SASS (`python3 labs/14-nbody/capture_lab_rsqrt_pipes.py
// sass`, cuobjdump), per loop trip of 64 interactions and loop copy: MUFU.RSQ 64 (1 - 1/k), the
// seeds' SHF and IADD3 64 / k each, the chains' extra FFMA, NOP runs in spread_fenced, and how
// many instructions lie between consecutive MUFU.RSQ (stage 08: 1 to 8, grouped by source).
#include "lab_rsqrt_pipes.h"

// The reference kernel (solutions/, stage 07's lesson), whatever chapters/ holds: the lab measures
// interaction forms, not the reader's kernel, and the bench built from the exercises runs it too.
#include "../../solutions/14-nbody/lesson_register_blocked.cuh"

#include "common/check.h"

#include <stdexcept>

namespace nbody {
namespace lab {

namespace {

constexpr int lab_rows = 4, lab_threads = 256, lab_unroll = 16;

// chained: each root's input waits for the previous root; chained_pairs: every second one does.
enum class order { compiler, spread, spread_fenced, chained, chained_pairs };

// One MUFU.RSQ that the PTX keeps in its place among the other volatile ones.
__device__ __forceinline__ float rsqrt_in_place(float x) {
  float r;
  asm volatile("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}

// Stage 08's mass-scaled form (08_mass_scaled.cu: the tile, the sources, the self mask), with
// interaction k of each loop trip (k = source * R + row, 0 <= k < U R) on the FMA pipe when
// Every > 0 and k % Every == Every - 1, and the trip in order O.
template <int Every, order O>
struct rsqrt_form {
  template <int B>
  struct tile {
    float4 scaled[B];           // (a x, a y, a z, -a), a = m^(-1/2)
    alignas(16) float soft[B];  // a^2 e^2
    float zero;                 // 0, which ptxas cannot see (order::chained)
  };
  struct source {
    float ax, ay, az, minus_a, soft;
  };
  template <int B>
  __device__ static void put(tile<B> &t, int k, float4 b, float softening2) {
    const bool massive = b.w != 0.f;
    const float a = massive ? 1.f / sqrtf(b.w) : 0.f;
    t.scaled[k] = make_float4(a * b.x, a * b.y, a * b.z, -a);
    t.soft[k] = massive ? softening2 / b.w : 1.f;
    if constexpr (O == order::chained || O == order::chained_pairs)
      if (k == 0) t.zero = 0.f;
  }
  template <int B>
  __device__ static void get4(const tile<B> &t, int j, source *s) {
    const float4 soft = reinterpret_cast<const float4 *>(t.soft)[j / 4];
    const float soft_of[4] = {soft.x, soft.y, soft.z, soft.w};
#pragma unroll
    for (int g = 0; g < 4; ++g) {
      const float4 b = t.scaled[j + g];
      s[g] = source{b.x, b.y, b.z, b.w, soft_of[g]};
    }
  }
  __device__ static constexpr bool on_fma(int k) { return Every > 0 && k % Every == Every - 1; }

  // Stage 08's loop: the compiler places everything.
  template <bool Masked, int R, int B, int U>
  __device__ static void trip_compiler(const tile<B> &t, int j0, float (&fx)[R], float (&fy)[R],
                                       float (&fz)[R], const float (&px)[R], const float (&py)[R],
                                       const float (&pz)[R], const int (&self)[R], float zero,
                                       float &last) {
#pragma unroll
    for (int q = 0; q < U / 4; ++q) {
      source s[4];
      get4(t, j0 + 4 * q, s);
#pragma unroll
      for (int g = 0; g < 4; ++g) {
#pragma unroll
        for (int r = 0; r < R; ++r) {
          const source &b = s[g];
          const float dx = fmaf(b.minus_a, px[r], b.ax), dy = fmaf(b.minus_a, py[r], b.ay),
                      dz = fmaf(b.minus_a, pz[r], b.az);
          float d2 = fmaf(dx, dx, fmaf(dy, dy, fmaf(dz, dz, b.soft)));
          // chained: d2 + 0 * (the previous root), exact, but this root now waits for that one
          if (O == order::chained || (O == order::chained_pairs && r % 2 == 0))
            d2 = fmaf(last, zero, d2);
          float inv3;
          if (on_fma((4 * q + g) * R + r)) {
            inv3 = rsqrt_cubed_fma(d2);
          } else {
            const float inv = reciprocal_sqrt(d2);
            last = inv;
            inv3 = inv * inv * inv;
          }
          if (Masked && j0 + 4 * q + g == self[r]) inv3 = 0.f;
          fx[r] = fmaf(dx, inv3, fx[r]);
          fy[r] = fmaf(dy, inv3, fy[r]);
          fz[r] = fmaf(dz, inv3, fz[r]);
        }
      }
    }
  }

  // The same interactions software-pipelined: step k computes the squared distance of
  // interaction k, the root of k - 1 and the cube and sums of k - 2 (k = source * R + row).
  template <bool Masked, int R, int B, int U>
  __device__ static void trip_spread(const tile<B> &t, int j0, float (&fx)[R], float (&fy)[R],
                                     float (&fz)[R], const float (&px)[R], const float (&py)[R],
                                     const float (&pz)[R], const int (&self)[R]) {
    constexpr int N = U * R;
    source s[U];
    float dx[N], dy[N], dz[N], d2[N], root[N];
#pragma unroll
    for (int k = 0; k < N + 2; ++k) {
      if (k < N) {
        const int j = k / R, r = k % R;
        if (r == 0 && j % 4 == 0) get4(t, j0 + j, s + j);
        dx[k] = fmaf(s[j].minus_a, px[r], s[j].ax);
        dy[k] = fmaf(s[j].minus_a, py[r], s[j].ay);
        dz[k] = fmaf(s[j].minus_a, pz[r], s[j].az);
        d2[k] = fmaf(dx[k], dx[k], fmaf(dy[k], dy[k], fmaf(dz[k], dz[k], s[j].soft)));
      }
      if (k >= 1 && k - 1 < N)
        root[k - 1] = on_fma(k - 1) ? rsqrt_cubed_fma(d2[k - 1]) : rsqrt_in_place(d2[k - 1]);
      if (k >= 2) {
        const int c = k - 2, j = c / R, r = c % R;
        float inv3 = on_fma(c) ? root[c] : root[c] * root[c] * root[c];
        if (Masked && j0 + j == self[r]) inv3 = 0.f;
        fx[r] = fmaf(dx[c], inv3, fx[r]);
        fy[r] = fmaf(dy[c], inv3, fy[r]);
        fz[r] = fmaf(dz[c], inv3, fz[r]);
      }
      if (O == order::spread_fenced) __syncwarp();
    }
  }

  template <bool Masked, int R, int B, int U>
  __device__ static void loop(const tile<B> &t, float (&fx)[R], float (&fy)[R], float (&fz)[R],
                              const float (&px)[R], const float (&py)[R], const float (&pz)[R],
                              const int (&self)[R]) {
    static_assert(B % U == 0 && U % 4 == 0, "whole trips of four-source groups");
    static_assert(Every == 0 || (U * R) % Every == 0, "the same pattern in every trip");
    constexpr bool chained = O == order::chained || O == order::chained_pairs;
    const float zero = chained ? t.zero : 0.f;
    float last = 0.f;
#pragma unroll 1
    for (int j0 = 0; j0 < B; j0 += U) {
      if constexpr (O == order::compiler || chained)
        trip_compiler<Masked, R, B, U>(t, j0, fx, fy, fz, px, py, pz, self, zero, last);
      else trip_spread<Masked, R, B, U>(t, j0, fx, fy, fz, px, py, pz, self);
    }
  }

  // As stage 08: the j == i mask only in the tiles that hold any of the block's rows.
  template <int R, int B, int U>
  __device__ static void tile_pass(const tile<B> &t, float (&fx)[R], float (&fy)[R], float (&fz)[R],
                                   const float (&px)[R], const float (&py)[R], const float (&pz)[R],
                                   std::ptrdiff_t block_at, float /*softening2: in the tile*/) {
    if (block_at < B && block_at > -std::ptrdiff_t(R) * B) {
      int self[R];
#pragma unroll
      for (int r = 0; r < R; ++r)
        self[r] = int(block_at + std::ptrdiff_t(threadIdx.x) + std::ptrdiff_t(r) * B);
      loop<true, R, B, U>(t, fx, fy, fz, px, py, pz, self);
    } else {
      const int none[R] = {};
      loop<false, R, B, U>(t, fx, fy, fz, px, py, pz, none);
    }
  }
};

template <class Form>
void launch(float4 *d_force, const float4 *d_body, std::size_t n, float softening2,
            cudaStream_t stream) {
  const std::size_t row_blocks = ceil_div(n, std::size_t(lab_rows) * lab_threads);
  const int split = n ? column_split(n, row_blocks, lab_threads) : 1;
  launch_register_blocked<Form, lab_rows, lab_threads, lab_unroll>(d_force, d_body, n, 0, n, split,
                                                                   softening2, stream);
}

}  // namespace

const char *name(rsqrt_variant v) {
  switch (v) {
    case rsqrt_variant::stage08_copy: return "rsqrt lab: stage 08's loop, all MUFU.RSQ";
    case rsqrt_variant::fma_1_16: return "rsqrt lab: 1 in 16 on the FMA pipe";
    case rsqrt_variant::fma_1_8: return "rsqrt lab: 1 in 8 on the FMA pipe";
    case rsqrt_variant::fma_1_4: return "rsqrt lab: 1 in 4 on the FMA pipe";
    case rsqrt_variant::fma_1_2: return "rsqrt lab: 1 in 2 on the FMA pipe";
    case rsqrt_variant::spread: return "rsqrt lab: all MUFU.RSQ, spread (PTX order)";
    case rsqrt_variant::spread_fenced: return "rsqrt lab: all MUFU.RSQ, spread, fenced";
    case rsqrt_variant::fma_1_8_spread: return "rsqrt lab: 1 in 8 on the FMA pipe, spread";
    case rsqrt_variant::chained: return "rsqrt lab: all MUFU.RSQ, chained one after another";
    case rsqrt_variant::chained_pairs: return "rsqrt lab: all MUFU.RSQ, chained in pairs";
    case rsqrt_variant::fma_1_16_chained: return "rsqrt lab: 1 in 16 on the FMA pipe, chained";
  }
  return "?";
}

double fma_pipe_share(rsqrt_variant v) {
  switch (v) {
    case rsqrt_variant::fma_1_16:
    case rsqrt_variant::fma_1_16_chained: return 1.0 / 16;
    case rsqrt_variant::fma_1_8:
    case rsqrt_variant::fma_1_8_spread: return 1.0 / 8;
    case rsqrt_variant::fma_1_4: return 1.0 / 4;
    case rsqrt_variant::fma_1_2: return 1.0 / 2;
    default: return 0;
  }
}

void forces_rsqrt_variant(float4 *d_force, const float4 *d_body, std::size_t n, float softening2,
                          rsqrt_variant v, cudaStream_t stream) {
  switch (v) {
    case rsqrt_variant::stage08_copy:
      return launch<rsqrt_form<0, order::compiler>>(d_force, d_body, n, softening2, stream);
    case rsqrt_variant::fma_1_16:
      return launch<rsqrt_form<16, order::compiler>>(d_force, d_body, n, softening2, stream);
    case rsqrt_variant::fma_1_8:
      return launch<rsqrt_form<8, order::compiler>>(d_force, d_body, n, softening2, stream);
    case rsqrt_variant::fma_1_4:
      return launch<rsqrt_form<4, order::compiler>>(d_force, d_body, n, softening2, stream);
    case rsqrt_variant::fma_1_2:
      return launch<rsqrt_form<2, order::compiler>>(d_force, d_body, n, softening2, stream);
    case rsqrt_variant::spread:
      return launch<rsqrt_form<0, order::spread>>(d_force, d_body, n, softening2, stream);
    case rsqrt_variant::spread_fenced:
      return launch<rsqrt_form<0, order::spread_fenced>>(d_force, d_body, n, softening2, stream);
    case rsqrt_variant::fma_1_8_spread:
      return launch<rsqrt_form<8, order::spread>>(d_force, d_body, n, softening2, stream);
    case rsqrt_variant::chained:
      return launch<rsqrt_form<0, order::chained>>(d_force, d_body, n, softening2, stream);
    case rsqrt_variant::chained_pairs:
      return launch<rsqrt_form<0, order::chained_pairs>>(d_force, d_body, n, softening2, stream);
    case rsqrt_variant::fma_1_16_chained:
      return launch<rsqrt_form<16, order::chained>>(d_force, d_body, n, softening2, stream);
  }
  throw std::invalid_argument("unknown rsqrt lab variant");
}

}  // namespace lab
}  // namespace nbody
