// SPDX-License-Identifier: BSD-3-Clause
// Stage 06: the template size as a compile-time parameter. The CUDA Handbook 15.7.
//
// Changes from stage 05: the kernel takes the template's width and height as template parameters
// (0: read at run time, stage 05's kernel), instantiated for 8x8 and 16x16, as the book specialised
// 8x8. With the sizes known the loops and the tile load unroll completely: offsets and constant
// addresses become immediates, and template words are read as instruction operands.
// What to look for: in the SASS of the 16x16 instance, straight-line LDS and IMAD with c[0x3][...]
// operands and no loop; in the progression table, this row's speedup; in the profile, fewer warp
// instructions and more registers, yet each warp issues more often.
#include "ncc_common.cuh"
#include "lesson_tex_tex.cuh"
#include "lesson_shared_tile.cuh"
#include "lesson_sm_aware.cuh"
#include "lesson_unrolled4.cuh"

#include <type_traits>

namespace {

template <bool Sums, class Mul, int TW, int TH>
__global__ void corr_shared4_size(ncc::view v, ncc::output o) {
  // EXERCISE BEGIN: stage 05's kernel, written so that its loops and the tile load unroll
  // completely in the instances compiled for a size (TW, TH not 0).
  const int tw = TW ? TW : v.tw, th = TH ? TH : v.th;
  extern __shared__ std::uint8_t tile[];
  const int x0 = blockIdx.x * ncc::tile_w, y0 = blockIdx.y * ncc::tile_h;
  ncc::load_tile(tile, v, tw, th, x0, y0);
  const int x = x0 + threadIdx.x, y = y0 + threadIdx.y;
  if (x >= v.out_w() || y >= v.out_h()) return;
  const int pitch = ncc::shared_pitch(tw);
  const ncc::sums3 s =
      ncc::correlate_words<Mul>(tile, threadIdx.y * pitch + threadIdx.x, pitch, tw, th);
  ncc::emit(v, o, x, y, s.i, s.isq, s.it);
  // EXERCISE END
}

ncc::path run(const ncc::problem &p, const ncc::output &out, cudaStream_t stream) {
  const ncc::view &v = p.v();
  if (!ncc::tile_fits(v.tw, v.th) || !ncc::load_template4(p, stream))
    return ncc::run_tex_tex_fallback(p, out, stream);
  const std::size_t shared = ncc::shared_tile_bytes(v.tw, v.th);
  const dim3 block(ncc::tile_w, ncc::tile_h),
      grid(ncc::ceil_div(v.out_w(), ncc::tile_w), ncc::ceil_div(v.out_h(), ncc::tile_h));
  ncc::launch_by_capability([&](auto mul) {
    using Mul = decltype(mul);
    // Launches the instance for a compile-time size (std::integral_constant), 0 x 0: the generic
    // one.
    auto launch = [&](auto tw, auto th) {
      constexpr int TW = decltype(tw)::value, TH = decltype(th)::value;
      if (out.sums()) corr_shared4_size<true, Mul, TW, TH><<<grid, block, shared, stream>>>(v, out);
      else corr_shared4_size<false, Mul, TW, TH><<<grid, block, shared, stream>>>(v, out);
    };
    // EXERCISE BEGIN: launch the instance compiled for this template's exact size (8x8 or 16x16),
    // or the generic one.
    using k0 = std::integral_constant<int, 0>;
    using k8 = std::integral_constant<int, 8>;
    using k16 = std::integral_constant<int, 16>;
    if (v.tw == 8 && v.th == 8) launch(k8{}, k8{});
    else if (v.tw == 16 && v.th == 16) launch(k16{}, k16{});
    else launch(k0{}, k0{});
    // EXERCISE END
  });
  CUDA_CHECK_LAUNCH();
  return ncc::path::own;
}

}  // namespace

NCC_STAGE("template size at compile time, 8x8 and 16x16 (15.7)", run);
