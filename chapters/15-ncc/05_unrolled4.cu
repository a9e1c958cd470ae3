// SPDX-License-Identifier: BSD-3-Clause
// Stage 05: the inner loop unrolled by 4. The CUDA Handbook 15.5.2 (corrShared4).
//
// Your task: the inner loop of stage 04 spends instructions on its own bookkeeping (a counter, a
// branch, an index, a constant load) for every pixel. Take a template row 4 pixels at a time,
// with the 4 template bytes as one 32-bit word from constant memory, and the pixels left over one
// by one. You write the loop in the lesson header lesson_unrolled4.cuh (its opening comment says
// more); the word-padded copy of the template and this file are given. Watch for: widths that are
// not a multiple of 4, and the order of the bytes in a word; in the SASS, the constant loads per
// template pixel; in the progression table, this row's speedup.
#include "ncc_common.cuh"
#include "lesson_tex_tex.cuh"
#include "lesson_shared_tile.cuh"
#include "lesson_sm_aware.cuh"
#include "lesson_unrolled4.cuh"

namespace {

template <bool Sums, class Mul>
__global__ void corr_shared4(ncc::view v, ncc::output o) {
  extern __shared__ std::uint8_t tile[];
  const int x0 = blockIdx.x * ncc::tile_w, y0 = blockIdx.y * ncc::tile_h;
  ncc::load_tile(tile, v, v.tw, v.th, x0, y0);
  const int x = x0 + threadIdx.x, y = y0 + threadIdx.y;
  if (x >= v.out_w() || y >= v.out_h()) return;
  const int pitch = ncc::shared_pitch(v.tw);
  const ncc::sums3 s =
      ncc::correlate_words<Mul>(tile, threadIdx.y * pitch + threadIdx.x, pitch, v.tw, v.th);
  ncc::emit(v, o, x, y, s.i, s.isq, s.it);
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
    if (out.sums()) corr_shared4<true, Mul><<<grid, block, shared, stream>>>(v, out);
    else corr_shared4<false, Mul><<<grid, block, shared, stream>>>(v, out);
  });
  CUDA_CHECK_LAUNCH();
  return ncc::path::own;
}

}  // namespace

NCC_STAGE("inner loop unrolled by 4 (15.5.2)", run);
