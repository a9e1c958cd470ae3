// SPDX-License-Identifier: BSD-3-Clause
// Stage 03: the image tile in shared memory. The CUDA Handbook 15.4 (listings 15.5 and 15.6,
// corrShared).
//
// Changes from stage 02: each block of 32 x 8 threads first copies the pixels its outputs need, a
// tile with its halo, from the texture into shared memory, then reads every image pixel from there:
// one fetch per block instead of one per covering window. A tile over 48 KB, or a template over the
// constant memory, falls back to stage 01. The tile load and loop are in lesson_shared_tile.cuh,
// because stages 04..06 run them too.
// What to look for: in the SASS, LDS.U8 instead of TEX in the inner loop and one BAR.SYNC after the
// tile's loads; in the progression table, this row's speedup; in the profile, the SM busy with
// arithmetic instead of waiting on the texture queue.
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
