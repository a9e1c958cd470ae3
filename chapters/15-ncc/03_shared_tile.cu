// SPDX-License-Identifier: BSD-3-Clause
// Stage 03: the image tile in shared memory. The CUDA Handbook 15.4 (listings 15.5, 15.6).
//
// Your task: neighbouring outputs read almost the same image pixels (a pixel lies in the windows
// of up to w h outputs), and stage 02 fetches a pixel through the texture for each of them. Let a
// block fetch the pixels its outputs need once, into shared memory, and read them from there. You
// write the tile load and the loop over the tile in the lesson header lesson_shared_tile.cuh (its
// opening comment says more); this file's kernel and host code are given, with the fallback to
// stage 01's kernel when the tile does not fit. Watch for: which image pixels a block's outputs
// need (more than one per output), and when a thread may start reading what others copied; in the
// SASS, what replaces TEX in the inner loop.
#include "ncc_common.cuh"
#include "lesson_tex_tex.cuh"
#include "lesson_shared_tile.cuh"

namespace {

template <bool Sums>
__global__ void corr_shared(ncc::view v, ncc::output o) {
  extern __shared__ std::uint8_t tile[];
  const int x0 = blockIdx.x * ncc::tile_w, y0 = blockIdx.y * ncc::tile_h;
  ncc::load_tile(tile, v, v.tw, v.th, x0, y0);
  const int x = x0 + threadIdx.x, y = y0 + threadIdx.y;
  if (x >= v.out_w() || y >= v.out_h()) return;
  const int pitch = ncc::shared_pitch(v.tw);
  const ncc::sums3 s =
      ncc::correlate_bytes<ncc::imad>(tile, threadIdx.y * pitch + threadIdx.x, pitch, v.tw, v.th);
  ncc::emit(v, o, x, y, s.i, s.isq, s.it);
}

ncc::path run(const ncc::problem &p, const ncc::output &out, cudaStream_t stream) {
  const ncc::view &v = p.v();
  if (!ncc::tile_fits(v.tw, v.th) || !ncc::load_constant_template(p, stream))
    return ncc::run_tex_tex_fallback(p, out, stream);
  const std::size_t shared = ncc::shared_tile_bytes(v.tw, v.th);
  const dim3 block(ncc::tile_w, ncc::tile_h),
      grid(ncc::ceil_div(v.out_w(), ncc::tile_w), ncc::ceil_div(v.out_h(), ncc::tile_h));
  if (out.sums()) corr_shared<true><<<grid, block, shared, stream>>>(v, out);
  else corr_shared<false><<<grid, block, shared, stream>>>(v, out);
  CUDA_CHECK_LAUNCH();
  return ncc::path::own;
}

}  // namespace

NCC_STAGE("image tile in shared memory (15.4)", run);
