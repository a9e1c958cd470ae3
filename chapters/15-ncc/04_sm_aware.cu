// SPDX-License-Identifier: BSD-3-Clause
// Stage 04: the "SM-aware" kernel. The CUDA Handbook 15.5.1 (corrSharedSM).
//
// Changes from stage 03: the multiply in the inner loop is a template parameter, and the host
// picks the kernel by the device's compute capability. On SM 1.x a 32-bit integer multiply took
// several instructions, while __umul24 (24 x 24 bits, enough for two bytes) was native: the book
// chose __umul24 there and the plain multiply elsewhere. Since SM 2.0 the 32-bit IMAD is the
// native one and __umul24 is emulated, so today the choice always lands on IMAD and this stage
// runs the same instructions as stage 03. The lesson that survives is the mechanism: one
// kernel template, instantiated per capability, chosen at run time (stages 08 and 09 choose by
// template size the same way).
// You write: the choice by capability, in the lesson header sm_aware.cuh.
// What to look for: the same timing as stage 03 on the H100 (88.3 us both at 16x16; the book
// measured +14% on GT200 and nothing elsewhere) and the same SASS: IMAD, no emulated 24-bit
// multiply (the mul24 instance is compiled but never launched).
#include "ncc_common.cuh"
#include "shared_tile.cuh"
#include "sm_aware.cuh"

namespace {

template <bool Sums, class Mul>
__global__ void corr_shared_sm(ncc::view v, ncc::output o) {
  extern __shared__ std::uint8_t tile[];
  const int x0 = blockIdx.x * ncc::tile_w, y0 = blockIdx.y * ncc::tile_h;
  ncc::load_tile(tile, v, v.tw, v.th, x0, y0);
  const int x = x0 + threadIdx.x, y = y0 + threadIdx.y;
  if (x >= v.out_w() || y >= v.out_h()) return;
  const int pitch = ncc::shared_pitch(v.tw);
  const ncc::sums3 s = ncc::correlate_bytes<Mul>(tile, threadIdx.y * pitch + threadIdx.x, pitch, v.tw, v.th);
  ncc::emit(v, o, x, y, s.i, s.isq, s.it);
}

ncc::path run(const ncc::problem &p, const ncc::output &out, cudaStream_t stream) {
  const ncc::view &v = p.v();
  if (!ncc::tile_fits(v.tw, v.th) || !ncc::load_constant_template(p, stream))
    return ncc::run_tex_tex_fallback(p, out, stream);
  const std::size_t shared = ncc::shared_tile_bytes(v.tw, v.th);
  const dim3 block(ncc::tile_w, ncc::tile_h), grid(ncc::ceil_div(v.out_w(), ncc::tile_w), ncc::ceil_div(v.out_h(), ncc::tile_h));
  ncc::launch_by_capability([&](auto mul) {
    using Mul = decltype(mul);
    if (out.sums())
      corr_shared_sm<true, Mul><<<grid, block, shared, stream>>>(v, out);
    else
      corr_shared_sm<false, Mul><<<grid, block, shared, stream>>>(v, out);
  });
  CUDA_CHECK_LAUNCH();
  return ncc::path::own;
}

}  // namespace

NCC_STAGE(COURSE_THIS_STAGE("SM-aware multiply (15.5.1)"), run);
