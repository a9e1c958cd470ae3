// SPDX-License-Identifier: BSD-3-Clause
// Stage 08: the CPU, SIMD and every core. The CUDA Handbook 14.7, listings 14.8 and 14.9.
// (Host code only: the build compiles this file as C++, not CUDA.)
//
// Changes from stage 01 (listing 14.2): (1) SOA: the bodies are copied into four arrays x, y, z,
// mass (padded with zero-mass bodies to a multiple of 16), so one vector load fetches the same
// field of 4, 8 or 16 bodies; (2) SIMD: body i is broadcast to every lane and each instruction
// computes 4 (SSE), 8 (AVX2+FMA) or 16 (AVX-512) interactions; the reciprocal square root is the
// hardware estimate (RSQRTPS: 12 bits; VRSQRT14PS: 14 bits) refined by one Newton-Raphson step,
// y' = y (1.5 - 0.5 d2 y^2), to nearly full float precision, as the book does; (3) threads: rows
// in chunks of 16, taken dynamically by the workers of a persistent thread pool.
// One binary for every x86-64 CPU: the AVX2 and AVX-512 functions carry target attributes (no
// -mavx flags for the whole file), and __builtin_cpu_supports picks what this CPU can run.
// What to look for: the CPU table (scalar, SIMD, SIMD x threads) and the GPU/CPU ratio
// (the book: 17.2M scalar, 307M SSE, 5650M SSE x 32 threads; the GK104 8x faster than that).
#include "cpu_nbody.h"
#include "nbody_common.cuh"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define NBODY_X86 1
#else
#define NBODY_X86 0
#endif

namespace {

using nbody::cpu::isa;

constexpr std::size_t pad = 16;          // the widest vector, in floats
constexpr std::size_t rows_per_task = 16;

struct soa {
  std::vector<float> x, y, z, m;
  explicit soa(const float4 *body, std::size_t n) {
    const std::size_t padded = (n + pad - 1) / pad * pad;
    x.assign(padded, 0.f), y.assign(padded, 0.f), z.assign(padded, 0.f), m.assign(padded, 0.f);
    for (std::size_t i = 0; i < n; ++i) x[i] = body[i].x, y[i] = body[i].y, z[i] = body[i].z, m[i] = body[i].w;
  }
  std::size_t padded() const { return x.size(); }
};

// Listing 14.2's inner loop on the SOA arrays (the compiler may vectorise it; -O3 with plain
// SSE2 rarely does, because of the division and the square root).
float4 row_scalar(const soa &b, std::size_t i, float softening2) {
  float fx = 0.f, fy = 0.f, fz = 0.f;
  for (std::size_t j = 0; j < b.padded(); ++j)
    nbody::body_body_interaction(fx, fy, fz, b.x[i], b.y[i], b.z[i], b.x[j], b.y[j], b.z[j], b.m[j], softening2);
  return float4{fx, fy, fz, 0.f};
}

#if NBODY_X86
inline float hsum(__m128 v) {
  __m128 s = _mm_add_ps(v, _mm_movehl_ps(v, v));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}

// Listing 14.8: four interactions per instruction (SSE is part of every x86-64 CPU).
float4 row_sse(const soa &b, std::size_t i, float softening2) {
  const __m128 x0 = _mm_set1_ps(b.x[i]), y0 = _mm_set1_ps(b.y[i]), z0 = _mm_set1_ps(b.z[i]);
  const __m128 soft = _mm_set1_ps(softening2), half = _mm_set1_ps(0.5f), three_halves = _mm_set1_ps(1.5f);
  __m128 ax = _mm_setzero_ps(), ay = _mm_setzero_ps(), az = _mm_setzero_ps();
  for (std::size_t j = 0; j < b.padded(); j += 4) {
    // EXERCISE BEGIN: four bodies j..j+3 at once: dx, dy, dz; d2 = dx^2 + dy^2 + dz^2 + softening^2;
    // inv = _mm_rsqrt_ps(d2) refined once by Newton-Raphson, inv * (1.5 - 0.5 d2 inv^2);
    // s = mass * inv^3; then ax += dx s, ay += dy s, az += dz s.
    const __m128 dx = _mm_sub_ps(_mm_loadu_ps(&b.x[j]), x0);
    const __m128 dy = _mm_sub_ps(_mm_loadu_ps(&b.y[j]), y0);
    const __m128 dz = _mm_sub_ps(_mm_loadu_ps(&b.z[j]), z0);
    const __m128 d2 = _mm_add_ps(_mm_add_ps(_mm_mul_ps(dx, dx), _mm_mul_ps(dy, dy)),
                                 _mm_add_ps(_mm_mul_ps(dz, dz), soft));
    __m128 inv = _mm_rsqrt_ps(d2);
    inv = _mm_mul_ps(inv, _mm_sub_ps(three_halves, _mm_mul_ps(_mm_mul_ps(half, d2), _mm_mul_ps(inv, inv))));
    const __m128 s = _mm_mul_ps(_mm_loadu_ps(&b.m[j]), _mm_mul_ps(inv, _mm_mul_ps(inv, inv)));
    ax = _mm_add_ps(ax, _mm_mul_ps(dx, s));
    ay = _mm_add_ps(ay, _mm_mul_ps(dy, s));
    az = _mm_add_ps(az, _mm_mul_ps(dz, s));
    // EXERCISE END
  }
  return float4{hsum(ax), hsum(ay), hsum(az), 0.f};
}

// The same with eight lanes and fused multiply-adds (the book's suggested AVX port).
__attribute__((target("avx2,fma"))) float4 row_avx2(const soa &b, std::size_t i, float softening2) {
  const __m256 x0 = _mm256_set1_ps(b.x[i]), y0 = _mm256_set1_ps(b.y[i]), z0 = _mm256_set1_ps(b.z[i]);
  const __m256 soft = _mm256_set1_ps(softening2), half = _mm256_set1_ps(0.5f), three_halves = _mm256_set1_ps(1.5f);
  __m256 ax = _mm256_setzero_ps(), ay = _mm256_setzero_ps(), az = _mm256_setzero_ps();
  for (std::size_t j = 0; j < b.padded(); j += 8) {
    const __m256 dx = _mm256_sub_ps(_mm256_loadu_ps(&b.x[j]), x0);
    const __m256 dy = _mm256_sub_ps(_mm256_loadu_ps(&b.y[j]), y0);
    const __m256 dz = _mm256_sub_ps(_mm256_loadu_ps(&b.z[j]), z0);
    const __m256 d2 = _mm256_fmadd_ps(dx, dx, _mm256_fmadd_ps(dy, dy, _mm256_fmadd_ps(dz, dz, soft)));
    __m256 inv = _mm256_rsqrt_ps(d2);
    inv = _mm256_mul_ps(inv, _mm256_fnmadd_ps(_mm256_mul_ps(half, d2), _mm256_mul_ps(inv, inv), three_halves));
    const __m256 s = _mm256_mul_ps(_mm256_loadu_ps(&b.m[j]), _mm256_mul_ps(inv, _mm256_mul_ps(inv, inv)));
    ax = _mm256_fmadd_ps(dx, s, ax);
    ay = _mm256_fmadd_ps(dy, s, ay);
    az = _mm256_fmadd_ps(dz, s, az);
  }
  const __m128 sx = _mm_add_ps(_mm256_castps256_ps128(ax), _mm256_extractf128_ps(ax, 1));
  const __m128 sy = _mm_add_ps(_mm256_castps256_ps128(ay), _mm256_extractf128_ps(ay, 1));
  const __m128 sz = _mm_add_ps(_mm256_castps256_ps128(az), _mm256_extractf128_ps(az, 1));
  return float4{hsum(sx), hsum(sy), hsum(sz), 0.f};
}

// The sum of the 16 lanes, added in the order _mm512_reduce_add_ps adds them. Not that intrinsic:
// GCC 12.2's (and its _mm512_castps512_ps256) extracts a half into an "undefined" register, and
// inlined here it warns -Wuninitialized (GCC bug 105593). The zero-masking extract, all lanes kept,
// is the same VEXTRACTF64X4 without the undefined operand.
__attribute__((target("avx512f"))) inline float hsum16(__m512 v) {
  const __m512d d = _mm512_castps_pd(v);
  const __m256 s = _mm256_add_ps(_mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xff, d, 1)),
                                 _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xff, d, 0)));
  return hsum(_mm_add_ps(_mm256_extractf128_ps(s, 1), _mm256_castps256_ps128(s)));
}

// Sixteen lanes; VRSQRT14PS is a better estimate than RSQRTPS, still refined once.
__attribute__((target("avx512f"))) float4 row_avx512(const soa &b, std::size_t i, float softening2) {
  const __m512 x0 = _mm512_set1_ps(b.x[i]), y0 = _mm512_set1_ps(b.y[i]), z0 = _mm512_set1_ps(b.z[i]);
  const __m512 soft = _mm512_set1_ps(softening2), half = _mm512_set1_ps(0.5f), three_halves = _mm512_set1_ps(1.5f);
  __m512 ax = _mm512_setzero_ps(), ay = _mm512_setzero_ps(), az = _mm512_setzero_ps();
  for (std::size_t j = 0; j < b.padded(); j += 16) {
    const __m512 dx = _mm512_sub_ps(_mm512_loadu_ps(&b.x[j]), x0);
    const __m512 dy = _mm512_sub_ps(_mm512_loadu_ps(&b.y[j]), y0);
    const __m512 dz = _mm512_sub_ps(_mm512_loadu_ps(&b.z[j]), z0);
    const __m512 d2 = _mm512_fmadd_ps(dx, dx, _mm512_fmadd_ps(dy, dy, _mm512_fmadd_ps(dz, dz, soft)));
    __m512 inv = _mm512_rsqrt14_ps(d2);
    inv = _mm512_mul_ps(inv, _mm512_fnmadd_ps(_mm512_mul_ps(half, d2), _mm512_mul_ps(inv, inv), three_halves));
    const __m512 s = _mm512_mul_ps(_mm512_loadu_ps(&b.m[j]), _mm512_mul_ps(inv, _mm512_mul_ps(inv, inv)));
    ax = _mm512_fmadd_ps(dx, s, ax);
    ay = _mm512_fmadd_ps(dy, s, ay);
    az = _mm512_fmadd_ps(dz, s, az);
  }
  return float4{hsum16(ax), hsum16(ay), hsum16(az), 0.f};
}
#endif

bool supported(isa s) {
  switch (s) {
    case isa::scalar: return true;
#if NBODY_X86
    case isa::sse: return true;
    case isa::avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case isa::avx512: return __builtin_cpu_supports("avx512f");
#else
    default: return false;
#endif
  }
  return false;
}

isa best() {
  for (isa s : {isa::avx512, isa::avx2, isa::sse})
    if (supported(s)) return s;
  return isa::scalar;
}

using row_fn = float4 (*)(const soa &, std::size_t, float);
row_fn row_function(isa s) {
  if (!supported(s)) throw std::invalid_argument(std::string("this CPU does not support ") + nbody::cpu::to_string(s));
  switch (s) {
    case isa::scalar: return row_scalar;
#if NBODY_X86
    case isa::sse: return row_sse;
    case isa::avx2: return row_avx2;
    case isa::avx512: return row_avx512;
#else
    default: break;
#endif
  }
  return row_scalar;
}

void forces(float4 *force, const float4 *body, std::size_t n, float softening2, isa s, course::thread_pool *pool) {
  const row_fn row = row_function(s);
  if (n == 0) return;
  const soa b(body, n);
  const std::size_t tasks = (n + rows_per_task - 1) / rows_per_task;
  auto task = [&](std::size_t t, unsigned) {
    const std::size_t end = std::min(n, (t + 1) * rows_per_task);
    for (std::size_t i = t * rows_per_task; i < end; ++i) force[i] = row(b, i, softening2);
  };
  if (pool) {
    pool->run(tasks, task);
  } else {
    for (std::size_t t = 0; t < tasks; ++t) task(t, 0);
  }
}

}  // namespace

NBODY_CPU_STAGE(COURSE_THIS_STAGE("CPU: SIMD x threads (14.7)"), forces, supported, best);
