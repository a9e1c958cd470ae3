// SPDX-License-Identifier: BSD-3-Clause
// Stage 01: texture-texture. The CUDA Handbook 15.2 (listing 15.1, corrTexTex2D_kernel).
//
// The chapter's baseline. One thread per output coefficient; image and template both read through
// texture objects (the book's texture references were removed in CUDA 12), whose cache suits the
// overlapping windows of neighbouring threads. It precomputes nothing: all five sums for every
// output. The loop is in lesson_tex_tex.cuh, because stages 02..06 and 10 fall back on it.
// What to look for: in the SASS, two TEX per template pixel and the IMADs of five sums; in the
// progression table, the row every later stage is measured against; in a profile (`make profile
// STAGE=15-ncc/01_tex_tex`), the texture pipe's queue as the top stall.
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
