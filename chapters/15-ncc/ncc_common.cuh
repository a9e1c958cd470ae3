// SPDX-License-Identifier: BSD-3-Clause
// What several NCC stages share: turning sums into a coefficient (15.1), writing either the sums
// or the coefficient (the two modes of 15.6), the template in __constant__ memory (15.3), the size
// of the shared tile (15.4), and the window sums of the image (SumI, SumISq) by sliding sums, for
// the stages that take them out of the inner loop (09, 10). No kernel a stage teaches lives here:
// the texture-texture fallback of stages 02..06 and 10 is stage 01's loop (lesson_tex_tex.cuh).
#pragma once

#include "ncc.h"

#include "common/check.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace ncc {

inline unsigned ceil_div(int a, int b) { return unsigned((a + b - 1) / b); }

// The coefficient from the sums. Numerator and the image's variance term are exact integers (the
// book's float arithmetic loses digits to cancellation once N SumIT passes 2^24); only the final
// scaling is float: |error| < 1e-6 for any template up to 32768 pixels. Both are at most
// N^2 x 127.5^2 in size: the variance term is N^2 times the window's variance, and the numerator
// is bounded by the root of the two variance terms (Cauchy-Schwarz). That is under 2^31 for
// N <= max_narrow_n pixels, where 32-bit arithmetic is exact (unsigned, so that N SumIT may wrap:
// the difference still comes out right) and its conversion to float one instruction; larger
// templates take 64 bits, whose conversions and products cost several times as many.
constexpr int max_narrow_n = 363;
// The two exact terms, in 32 bits (n <= max_narrow_n) and in 64: the numerator N SumIT - SumI SumT
// and the window's variance term N SumISq - SumI^2 (stage 10 computes them apart, so they are
// here).
__device__ __forceinline__ int numerator_narrow(int n, int sum_i, int sum_it, int sum_t) {
  return int(unsigned(n) * unsigned(sum_it) - unsigned(sum_i) * unsigned(sum_t));
}
__device__ __forceinline__ long long numerator_wide(int n, int sum_i, int sum_it, int sum_t) {
  return (long long)n * sum_it - (long long)sum_i * sum_t;
}
__device__ __forceinline__ int variance_narrow(int n, int sum_i, unsigned sum_isq) {
  return int(unsigned(n) * sum_isq - unsigned(sum_i) * unsigned(sum_i));
}
__device__ __forceinline__ long long variance_wide(int n, int sum_i, unsigned sum_isq) {
  return (long long)n * sum_isq - (long long)sum_i * sum_i;
}
__device__ __forceinline__ float coefficient(int n, int sum_i, unsigned sum_isq, int sum_it,
                                             int sum_t, float denom_t) {
  if (n <= max_narrow_n) {
    const int num = numerator_narrow(n, sum_i, sum_it, sum_t),
              var_i = variance_narrow(n, sum_i, sum_isq);
    if (var_i <= 0 || denom_t <= 0.0f) return 0.0f;  // a flat window or template: defined as 0
    return float(num) * rsqrtf(float(var_i) * denom_t);
  }
  const long long num = numerator_wide(n, sum_i, sum_it, sum_t),
                  var_i = variance_wide(n, sum_i, sum_isq);
  if (var_i <= 0 || denom_t <= 0.0f) return 0.0f;
  return float(num) * rsqrtf(float(var_i) * denom_t);
}

// Writes the result for output (x, y): the three sums, or the coefficient.
__device__ __forceinline__ void emit(const view &v, const output &o, int x, int y, int sum_i,
                                     unsigned sum_isq, int sum_it) {
  const std::size_t at = std::size_t(y) * std::size_t(v.out_w()) + std::size_t(x);
  if (o.coef) {
    o.coef[at] = coefficient(v.n, sum_i, sum_isq, sum_it, v.sum_t, v.denom_t);
  } else {
    o.sum_i[at] = sum_i;
    o.sum_isq[at] = int(sum_isq);
    o.sum_it[at] = sum_it;
  }
}

// --- the template in __constant__ memory (15.3) -----------------------------------------------
// Internal linkage: every stage file has its own copy, so all stages link into one benchmark.
namespace {
__constant__ std::uint8_t c_template[constant_template_bytes];

// Copies the template's bytes (rows of tw, no padding) once per problem; false if they do not fit.
inline bool load_constant_template(const problem &p, cudaStream_t stream) {
  static std::uint64_t loaded = 0;  // the problem whose template is there now
  const auto &t = p.host_template();
  if (t.pixels.size() > std::size_t(constant_template_bytes)) return false;
  if (loaded != p.id()) {
    CUDA_CHECK(cudaMemcpyToSymbolAsync(c_template, t.pixels.data(), t.pixels.size(), 0,
                                       cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(
        cudaStreamSynchronize(stream));  // the host vector is pageable; finish before returning
    loaded = p.id();
  }
  return true;
}
}  // namespace

// Whether the shared-memory tile of stages 03..06 fits: (tile_w + w - 1) x (tile_h + h - 1)
// bytes, each row padded to a multiple of 4 (the pitch that keeps word reads aligned).
__host__ __device__ inline int shared_pitch(int tw) { return (tile_w + tw - 1 + 3) / 4 * 4; }
inline std::size_t shared_tile_bytes(int tw, int th) {
  return std::size_t(shared_pitch(tw)) * std::size_t(tile_h + th - 1);
}
inline bool tile_fits(int tw, int th) {
  return shared_tile_bytes(tw, th) <= std::size_t(shared_tile_limit);
}

// --- window sums of the image by sliding sums ----------------------------------------------------
// rows: h1[j][x] = sum_{i<w} I[j][x+i], h2 the same of I^2 (H rows of out_w).
static __global__ void window_rows(view v, unsigned *h1, unsigned *h2) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
  if (x >= v.out_w()) return;
  const std::uint8_t *row = v.image + std::size_t(j) * v.pitch + x;
  unsigned s1 = 0, s2 = 0;
  for (int i = 0; i < v.tw; ++i) {
    const unsigned I = row[i];
    s1 += I;
    s2 += I * I;
  }
  h1[std::size_t(j) * v.out_w() + x] = s1;
  h2[std::size_t(j) * v.out_w() + x] = s2;
}

// columns: each thread slides a window of h rows down one column, over `run` outputs.
constexpr int window_run = 8;  // short runs: enough threads to fill the GPU
static __global__ void window_cols(view v, const unsigned *h1, const unsigned *h2, int *sum_i,
                                   unsigned *sum_isq) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y0 = blockIdx.y * window_run;
  const int wo = v.out_w();
  if (x >= wo) return;
  unsigned s1 = 0, s2 = 0;
  for (int j = 0; j < v.th; ++j)
    s1 += h1[std::size_t(y0 + j) * wo + x], s2 += h2[std::size_t(y0 + j) * wo + x];
  const int y_end = min(y0 + window_run, v.out_h());
  for (int y = y0;; ++y) {
    sum_i[std::size_t(y) * wo + x] = int(s1);
    sum_isq[std::size_t(y) * wo + x] = s2;
    if (y + 1 >= y_end) break;
    s1 += h1[std::size_t(y + v.th) * wo + x] - h1[std::size_t(y) * wo + x];
    s2 += h2[std::size_t(y + v.th) * wo + x] - h2[std::size_t(y) * wo + x];
  }
}

// SumI and SumISq of every window into sum_i, sum_isq (out_w x out_h); `rows` holds 2 H out_w.
inline void window_sums(const view &v, int *sum_i, unsigned *sum_isq, unsigned *rows,
                        cudaStream_t stream) {
  unsigned *h1 = rows, *h2 = rows + std::size_t(v.height) * v.out_w();
  window_rows<<<dim3(ceil_div(v.out_w(), 128), unsigned(v.height)), 128, 0, stream>>>(v, h1, h2);
  CUDA_CHECK_LAUNCH();
  window_cols<<<dim3(ceil_div(v.out_w(), 128), ceil_div(v.out_h(), window_run)), 128, 0, stream>>>(
      v, h1, h2, sum_i, sum_isq);
  CUDA_CHECK_LAUNCH();
}

// Device memory for window_sums and the sums a coefficient call needs but does not return.
struct window_workspace {
  explicit window_workspace(const problem &p)
      : rows(2 * std::size_t(p.v().height) * std::size_t(p.v().out_w())),
        sum_i(p.outputs()),
        sum_isq(p.outputs()) {}
  course::device_buffer<unsigned> rows;
  course::device_buffer<int> sum_i;
  course::device_buffer<unsigned> sum_isq;
};

}  // namespace ncc
