// SPDX-License-Identifier: BSD-3-Clause
// Stage 06: the template size as a compile-time parameter. The CUDA Handbook 15.7.
//
// Your task: stage 05's loops run over sizes read at run time, so the compiler keeps counters,
// branches and computed addresses. The book notes that for small templates a size known at
// compile time gives faster code (15.7). Write the kernel so that, in an instance compiled for a
// size, every size it uses is the compile-time one, and the host's choice of instance: 8x8 and
// 16x16 compiled in, the generic instance for anything else.
// Watch for: a 16 x 20 template is not a 16 x 16 one, and one size left to run time keeps its loop
// a loop. In the SASS of the 16x16 instance, look for loops and for where the template's words
// come from.
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
  COURSE_TODO();
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
    COURSE_TODO();
    // EXERCISE END
  });
  CUDA_CHECK_LAUNCH();
  return ncc::path::own;
}

}  // namespace

NCC_STAGE("template size at compile time, 8x8 and 16x16 (15.7)", run);
