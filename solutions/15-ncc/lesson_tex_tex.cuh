// SPDX-License-Identifier: BSD-3-Clause
// Lesson header of stage 01 (01_tex_tex): the texture-texture loop. The CUDA Handbook 15.2
// (listing 15.1, corrTexTex2D_kernel).
//
// One output's window, every template pixel against the image pixel under it, both read through
// their texture objects, accumulating the five sums of 15.2 (SumI, SumISq, SumT, SumTSq, SumIT).
// Stage 01's kernel is this loop and a write. The same loop is the fallback kernel of the stages
// whose own kernel cannot take a template (02..06: over the constant memory or the shared tile;
// 10: no m16n8k32 or a band over the shared memory), so once stage 01 passes, their fallback runs
// the loop written here (it uses three of the five sums: the template's come from the host).
// What to look for: two TEX per template pixel in the loop (make sass STAGE=15-ncc/01_tex_tex).
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
  for (int j = 0; j < v.th; ++j)
    for (int i = 0; i < v.tw; ++i) {
      const int I = tex2D<unsigned char>(v.tex_image, float(x + i), float(y + j));
      const int T = tex2D<unsigned char>(v.tex_template, float(i), float(j));
      s.i += I;
      s.isq += unsigned(I * I);
      s.t += T;
      s.tsq += unsigned(T * T);
      s.it += I * T;
    }
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
