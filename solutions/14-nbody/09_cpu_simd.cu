// SPDX-License-Identifier: BSD-3-Clause
// Stage 09: the CPU, SIMD and every core. The CUDA Handbook 14.7, listings 14.8 and 14.9. (Host
// code only: the build compiles this file as C++, not CUDA.)
//
// Changes from the host reference (listing 14.2, host_nbody.h): the bodies in SOA arrays, each
// instruction computing 4, 8 or 16 interactions (SSE, AVX2, AVX-512; the rsqrt estimate refined by
// one Newton-Raphson step, as the book does), and rows taken in chunks by a persistent thread pool.
// The SIMD row is the lesson (lesson_simd_row.h), compiled once per instruction set in #pragma GCC
// target regions; __builtin_cpu_supports picks what this CPU can run.
// What to look for: the bench's CPU table (scalar, each SIMD width on one thread, the widest on
// every core) and the GPU/CPU line under it: the book's honest rival.
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

constexpr std::size_t pad = 16;  // the widest vector, in floats
constexpr std::size_t rows_per_task = 16;

struct soa {
  std::vector<float> x, y, z, m;
  explicit soa(const float4 *body, std::size_t n) {
    const std::size_t padded = (n + pad - 1) / pad * pad;
    x.assign(padded, 0.f), y.assign(padded, 0.f), z.assign(padded, 0.f), m.assign(padded, 0.f);
    for (std::size_t i = 0; i < n; ++i)
      x[i] = body[i].x, y[i] = body[i].y, z[i] = body[i].z, m[i] = body[i].w;
  }
  std::size_t padded() const { return x.size(); }
};

// Listing 14.2's inner loop on the SOA arrays (the compiler may vectorise it; -O3 with plain
// SSE2 rarely does, because of the division and the square root).
float4 row_scalar(const soa &b, std::size_t i, float softening2) {
  float fx = 0.f, fy = 0.f, fz = 0.f;
  for (std::size_t j = 0; j < b.padded(); ++j)
    nbody::body_body_interaction(fx, fy, fz, b.x[i], b.y[i], b.z[i], b.x[j], b.y[j], b.z[j], b.m[j],
                                 softening2);
  return float4{fx, fy, fz, 0.f};
}

#if NBODY_X86
inline float hsum(__m128 v) {
  __m128 s = _mm_add_ps(v, _mm_movehl_ps(v, v));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}

// The vector operations the SIMD row (lesson_simd_row.h) is written in, once per instruction set:
// width lanes of float, and for each operation the instruction (or two) that does it.
// SSE (listing 14.8; part of every x86-64 CPU): four lanes, no fused multiply-add, RSQRTPS.
struct sse_ops {
  using vec = __m128;
  static constexpr std::size_t width = 4;
  static vec set1(float x) { return _mm_set1_ps(x); }
  static vec load(const float *p) { return _mm_loadu_ps(p); }
  static vec sub(vec a, vec b) { return _mm_sub_ps(a, b); }
  static vec mul(vec a, vec b) { return _mm_mul_ps(a, b); }
  static vec fmadd(vec a, vec b, vec c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }   // a b + c
  static vec fnmadd(vec a, vec b, vec c) { return _mm_sub_ps(c, _mm_mul_ps(a, b)); }  // c - a b
  static vec rsqrt_estimate(vec a) { return _mm_rsqrt_ps(a); }                        // 12 bits
  static float sum(vec a) { return hsum(a); }
};
namespace sse {
using V = sse_ops;
#include "lesson_simd_row.h"
}  // namespace sse

// The AVX2 and AVX-512 code is compiled for those instruction sets alone (these regions, not a
// global -mavx2), and run only where __builtin_cpu_supports finds them.
#pragma GCC push_options
#pragma GCC target("avx2,fma")
// Eight lanes and fused multiply-adds (the book's suggested AVX port).
struct avx2_ops {
  using vec = __m256;
  static constexpr std::size_t width = 8;
  static vec set1(float x) { return _mm256_set1_ps(x); }
  static vec load(const float *p) { return _mm256_loadu_ps(p); }
  static vec sub(vec a, vec b) { return _mm256_sub_ps(a, b); }
  static vec mul(vec a, vec b) { return _mm256_mul_ps(a, b); }
  static vec fmadd(vec a, vec b, vec c) { return _mm256_fmadd_ps(a, b, c); }
  static vec fnmadd(vec a, vec b, vec c) { return _mm256_fnmadd_ps(a, b, c); }
  static vec rsqrt_estimate(vec a) { return _mm256_rsqrt_ps(a); }  // 12 bits
  static float sum(vec a) {
    return hsum(_mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1)));
  }
};
namespace avx2 {
using V = avx2_ops;
#include "lesson_simd_row.h"
}  // namespace avx2
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f")
// Sixteen lanes; VRSQRT14PS is a better estimate than RSQRTPS, still refined once.
struct avx512_ops {
  using vec = __m512;
  static constexpr std::size_t width = 16;
  static vec set1(float x) { return _mm512_set1_ps(x); }
  static vec load(const float *p) { return _mm512_loadu_ps(p); }
  static vec sub(vec a, vec b) { return _mm512_sub_ps(a, b); }
  static vec mul(vec a, vec b) { return _mm512_mul_ps(a, b); }
  static vec fmadd(vec a, vec b, vec c) { return _mm512_fmadd_ps(a, b, c); }
  static vec fnmadd(vec a, vec b, vec c) { return _mm512_fnmadd_ps(a, b, c); }
  static vec rsqrt_estimate(vec a) { return _mm512_rsqrt14_ps(a); }  // 14 bits
  // The sum of the 16 lanes, added in the order _mm512_reduce_add_ps adds them. Not that
  // intrinsic: GCC 12.2's (and its _mm512_castps512_ps256) extracts a half into an "undefined"
  // register, and inlined here it warns -Wuninitialized (GCC bug 105593). The zero-masking
  // extract, all lanes kept, is the same VEXTRACTF64X4 without the undefined operand.
  static float sum(vec v) {
    const __m512d d = _mm512_castps_pd(v);
    const __m256 s = _mm256_add_ps(_mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xff, d, 1)),
                                   _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xff, d, 0)));
    return hsum(_mm_add_ps(_mm256_extractf128_ps(s, 1), _mm256_castps256_ps128(s)));
  }
};
namespace avx512 {
using V = avx512_ops;
#include "lesson_simd_row.h"
}  // namespace avx512
#pragma GCC pop_options
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
  if (!supported(s))
    throw std::invalid_argument(std::string("this CPU does not support ") +
                                nbody::cpu::to_string(s));
  switch (s) {
    case isa::scalar: return row_scalar;
#if NBODY_X86
    case isa::sse: return sse::row;
    case isa::avx2: return avx2::row;
    case isa::avx512: return avx512::row;
#else
    default: break;
#endif
  }
  return row_scalar;
}

void forces(float4 *force, const float4 *body, std::size_t n, float softening2, isa s,
            course::thread_pool *pool) {
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

NBODY_CPU_STAGE("CPU: SIMD x threads (14.7)", forces, supported, best);
