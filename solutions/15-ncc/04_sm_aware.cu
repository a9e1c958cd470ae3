// SPDX-License-Identifier: BSD-3-Clause
// Stage 04: the "SM-aware" kernel. The CUDA Handbook 15.5.1 (corrSharedSM, bSM1).
//
// Changes from stage 03: the inner loop's multiply becomes a template parameter, and the host picks
// the instance by compute capability. The book launched __umul24 on SM 1.x; since SM 2.0 the 32-bit
// IMAD is native and __umul24 emulated, so today the choice lands on IMAD. What survives is the
// mechanism: one kernel template, an instance chosen at run time (as stages 06 to 08 do by template
// size). The choice is in lesson_sm_aware.cuh: stages 05 and 06 launch through it.
// What to look for: stage 03's time (a speedup near 1) and stage 03's SASS: IMAD, no emulated
// 24-bit multiply (the mul24 instance is compiled but never launched).
#include "ncc_common.cuh"
#include "lesson_tex_tex.cuh"
#include "lesson_shared_tile.cuh"
#include "lesson_sm_aware.cuh"

namespace {

template <bool Sums, class Mul>
__global__ void corr_shared_sm(ncc::view v, ncc::output o) {
  extern __shared__ std::uint8_t tile[];
  const int x0 = blockIdx.x * ncc::tile_w, y0 = blockIdx.y * ncc::tile_h;
  ncc::load_tile(tile, v, v.tw, v.th, x0, y0);
  const int x = x0 + threadIdx.x, y = y0 + threadIdx.y;
  if (x >= v.out_w() || y >= v.out_h()) return;
  const int pitch = ncc::shared_pitch(v.tw);
  const ncc::sums3 s =
      ncc::correlate_bytes<Mul>(tile, threadIdx.y * pitch + threadIdx.x, pitch, v.tw, v.th);
  ncc::emit(v, o, x, y, s.i, s.isq, s.it);
}

ncc::path run(const ncc::problem &p, const ncc::output &out, cudaStream_t stream) {
  const ncc::view &v = p.v();
  if (!ncc::tile_fits(v.tw, v.th) || !ncc::load_constant_template(p, stream))
    return ncc::run_tex_tex_fallback(p, out, stream);
  const std::size_t shared = ncc::shared_tile_bytes(v.tw, v.th);
  const dim3 block(ncc::tile_w, ncc::tile_h),
      grid(ncc::ceil_div(v.out_w(), ncc::tile_w), ncc::ceil_div(v.out_h(), ncc::tile_h));
  ncc::launch_by_capability([&](auto mul) {
    using Mul = decltype(mul);
    if (out.sums()) corr_shared_sm<true, Mul><<<grid, block, shared, stream>>>(v, out);
    else corr_shared_sm<false, Mul><<<grid, block, shared, stream>>>(v, out);
  });
  CUDA_CHECK_LAUNCH();
  return ncc::path::own;
}

}  // namespace

NCC_STAGE("SM-aware multiply (15.5.1)", run);
