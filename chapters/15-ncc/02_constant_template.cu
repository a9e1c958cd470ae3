// SPDX-License-Identifier: BSD-3-Clause
// Stage 02: the template in __constant__ memory. The CUDA Handbook 15.3 (listings 15.3, 15.4).
//
// Your task: a search keeps one template and slides it over the image, so the template's
// statistics need computing only once, on the host, and its pixels can sit in constant memory,
// where all the threads of a warp reading the same byte are served at once. The host side is
// given (the template copied once per problem, its statistics in the view); you write the
// kernel's loop, now with three sums per output and the template read from constant memory
// instead of a texture.
// Watch for: how the template's bytes are laid out in constant memory; in the SASS, what takes
// the place of the second texture fetch; in the progression table, this row's speedup.
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
  COURSE_TODO();
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
