// SPDX-License-Identifier: BSD-3-Clause
// Stage 01: texture-texture. The CUDA Handbook 15.2 (corrTexTex2D).
//
// One thread per output coefficient. Image and template are both read through texture objects
// (the book's texture references were removed in CUDA 12): the texture cache's 2D locality fits
// the way neighbouring threads read overlapping windows. Like the book's first kernel, it does
// not use precomputed template statistics: it accumulates all five sums, SumI, SumISq, SumT,
// SumTSq and SumIT, per output.
// What to look for: in the timing, the baseline of the chapter (two texture fetches per template
// pixel); in the SASS, two TEX instructions in the inner loop and the IMADs of the sums.
#include "ncc_common.cuh"

namespace {

template <bool Sums>
__global__ void corr_tex_tex(ncc::view v, ncc::output o) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= v.out_w() || y >= v.out_h()) return;
  int sum_i = 0, sum_t = 0, sum_it = 0;
  unsigned sum_isq = 0, sum_tsq = 0;
  // EXERCISE BEGIN: for every template pixel (i, j), fetch I at (x+i, y+j) from v.tex_image and
  // T at (i, j) from v.tex_template (tex2D<unsigned char>), and accumulate the five sums.
  COURSE_TODO();
  // EXERCISE END
  const std::size_t at = std::size_t(y) * std::size_t(v.out_w()) + std::size_t(x);
  if (Sums) {
    o.sum_i[at] = sum_i;
    o.sum_isq[at] = int(sum_isq);
    o.sum_it[at] = sum_it;
  } else {
    // The template's variance term from the sums just taken (the book does it in double on the
    // host once the template is fixed: stage 02).
    const float denom_t = float((long long)v.n * sum_tsq - (long long)sum_t * sum_t);
    o.coef[at] = ncc::coefficient(v.n, sum_i, sum_isq, sum_it, sum_t, denom_t);
  }
}

ncc::path run(const ncc::problem &p, const ncc::output &out, cudaStream_t stream) {
  const ncc::view &v = p.v();
  const dim3 block(32, 8), grid(ncc::ceil_div(v.out_w(), 32), ncc::ceil_div(v.out_h(), 8));
  if (out.sums())
    corr_tex_tex<true><<<grid, block, 0, stream>>>(v, out);
  else
    corr_tex_tex<false><<<grid, block, 0, stream>>>(v, out);
  CUDA_CHECK_LAUNCH();
  return ncc::path::own;
}

}  // namespace

NCC_STAGE(COURSE_THIS_STAGE("texture-texture (15.2)"), run);
