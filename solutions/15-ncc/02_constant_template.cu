// SPDX-License-Identifier: BSD-3-Clause
// Stage 02: the template in __constant__ memory, its statistics precomputed. The CUDA Handbook 15.3
// (listings 15.3 and 15.4, CopyToTemplate and corrTemplate2D).
//
// Changes from stage 01: the template is copied once per problem into constant memory (16 KB; a
// larger one falls back to stage 01's kernel), and its sums and variance term are computed once on
// the host, in 64-bit integers. Three sums per pixel remain and one texture fetch; a warp reads the
// same template byte at once, one constant-cache broadcast.
// What to look for: in the SASS, one TEX and one LDC.U8 per template pixel and no template sums; in
// the progression table, this row's speedup; in the profile, the texture queue's stall
// (tex_throttle) falling.
#include "ncc_common.cuh"
#include "lesson_tex_tex.cuh"

namespace {

template <bool Sums>
__global__ void corr_constant(ncc::view v, ncc::output o) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= v.out_w() || y >= v.out_h()) return;
  int sum_i = 0, sum_it = 0;
  unsigned sum_isq = 0;
  // EXERCISE BEGIN: SumI, SumISq and SumIT for this output, the template read from constant memory
  // (ncc::c_template) and the image through its texture.
  int t = 0;
  for (int j = 0; j < v.th; ++j)
    for (int i = 0; i < v.tw; ++i) {
      const int I = tex2D<unsigned char>(v.tex_image, float(x + i), float(y + j));
      const int T = ncc::c_template[t++];
      sum_i += I;
      sum_isq += unsigned(I * I);
      sum_it += I * T;
    }
  // EXERCISE END
  ncc::emit(v, o, x, y, sum_i, sum_isq, sum_it);
}

ncc::path run(const ncc::problem &p, const ncc::output &out, cudaStream_t stream) {
  if (!ncc::load_constant_template(p, stream)) return ncc::run_tex_tex_fallback(p, out, stream);
  const ncc::view &v = p.v();
  const dim3 block(32, 8), grid(ncc::ceil_div(v.out_w(), 32), ncc::ceil_div(v.out_h(), 8));
  if (out.sums()) corr_constant<true><<<grid, block, 0, stream>>>(v, out);
  else corr_constant<false><<<grid, block, 0, stream>>>(v, out);
  CUDA_CHECK_LAUNCH();
  return ncc::path::own;
}

}  // namespace

NCC_STAGE("template in constant memory (15.3)", run);
