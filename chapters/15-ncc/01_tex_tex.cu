// SPDX-License-Identifier: BSD-3-Clause
// Stage 01: texture-texture. The CUDA Handbook 15.2 (listing 15.1, corrTexTex2D_kernel).
//
// Your task: the first, plainest correlation. One thread per output; the image and the template
// are both read through texture objects, and every output computes all five sums of 15.2 itself,
// the template's two included, as the book's first kernel does. You write the loop over the
// template in the lesson header lesson_tex_tex.cuh (its opening comment says more); this file
// launches it and turns the sums into the output. Watch for: in the SASS, how many texture fetches
// each template pixel costs; in the progression table, this stage's row, the baseline of the
// chapter.
#include "ncc_common.cuh"
#include "lesson_tex_tex.cuh"

namespace {

template <bool Sums>
__global__ void corr_tex_tex(ncc::view v, ncc::output o) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= v.out_w() || y >= v.out_h()) return;
  const ncc::sums5 s = ncc::tex_tex_sums(v, x, y);
  const std::size_t at = std::size_t(y) * std::size_t(v.out_w()) + std::size_t(x);
  if (Sums) {
    o.sum_i[at] = s.i;
    o.sum_isq[at] = int(s.isq);
    o.sum_it[at] = s.it;
  } else {
    // The template's variance term from the sums just taken (the book does it in double on the
    // host once the template is fixed: stage 02).
    const float denom_t = float((long long)v.n * s.tsq - (long long)s.t * s.t);
    o.coef[at] = ncc::coefficient(v.n, s.i, s.isq, s.it, s.t, denom_t);
  }
}

ncc::path run(const ncc::problem &p, const ncc::output &out, cudaStream_t stream) {
  const ncc::view &v = p.v();
  const dim3 block(32, 8), grid(ncc::ceil_div(v.out_w(), 32), ncc::ceil_div(v.out_h(), 8));
  if (out.sums()) corr_tex_tex<true><<<grid, block, 0, stream>>>(v, out);
  else corr_tex_tex<false><<<grid, block, 0, stream>>>(v, out);
  CUDA_CHECK_LAUNCH();
  return ncc::path::own;
}

}  // namespace

NCC_STAGE("texture-texture (15.2)", run);
