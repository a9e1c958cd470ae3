// SPDX-License-Identifier: BSD-3-Clause
// Lesson header of stage 01 (01_tex_tex): the texture-texture loop. The CUDA Handbook 15.2
// (listing 15.1, corrTexTex2D_kernel).
//
// Your task: the loop at the heart of the chapter. For one output, compare the template with the
// image window under it, pixel by pixel, reading both through the texture unit, and take the five
// sums of 15.2 from which the coefficient follows (15.1). Stage 01 runs it once per output; the
// stages that cannot take a template (02..06, 10) fall back on it, so they stay TODO until this
// loop is written.
// Watch for: the texture coordinates of the image pixel (the window starts at the output's own
// coordinates), and sums that stay exact. In the SASS (make sass STAGE=exercise/15-ncc/01_tex_tex),
// count the texture fetches per template pixel.
#pragma once

#include "ncc_common.cuh"

namespace ncc {

// The five sums of one output window (15.2).
struct sums5 {
  int i = 0, t = 0, it = 0;
  unsigned isq = 0, tsq = 0;
};

// The sums of the window whose upper left image pixel is (x, y): template pixel (i, j) against
// image pixel (x + i, y + j), for the v.tw x v.th template.
__device__ __forceinline__ sums5 tex_tex_sums(const view &v, int x, int y) {
  sums5 s;
  // EXERCISE BEGIN: the five sums of 15.2 for this output, every template and image pixel read
  // through its texture object.
  COURSE_TODO();
  // EXERCISE END
  return s;
}

// --- the texture-texture kernel as a fallback
// ----------------------------------------------------- One thread per output, the template
// statistics taken from the host (15.3). Listing 15.6 falls back to corrTexTex2D when the shared
// tile does not fit; stages 02..06 also fall back when the template does not fit their constant
// memory, and stage 10 where its kernel cannot run.
static __global__ void corr_tex_tex_fallback(view v, output o) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= v.out_w() || y >= v.out_h()) return;
  const sums5 s = tex_tex_sums(v, x, y);
  emit(v, o, x, y, s.i, s.isq, s.it);
}

inline path run_tex_tex_fallback(const problem &p, const output &out, cudaStream_t stream) {
  const view &v = p.v();
  const dim3 block(32, 8), grid(ceil_div(v.out_w(), 32), ceil_div(v.out_h(), 8));
  corr_tex_tex_fallback<<<grid, block, 0, stream>>>(v, out);
  CUDA_CHECK_LAUNCH();
  return path::tex_tex_fallback;
}

}  // namespace ncc
