// SPDX-License-Identifier: BSD-3-Clause
// Stage 04: the "SM-aware" kernel. The CUDA Handbook 15.5.1 (corrSharedSM).
//
// Your task: the book's GPUs differed in which integer multiply was fast, so its host code chose a
// kernel instance by the device's compute capability. The kernel here already takes its multiply
// as a template parameter; you write the host's choice, in the lesson header lesson_sm_aware.cuh
// (its opening comment says more). Watch for: what asking the device costs if done on every call,
// and which instance today's GPUs get. No test can tell the choice apart on today's GPUs: both
// instances compile to the same SASS (IMAD), so read your host code against the book's reason for
// the choice (15.5.1).
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
