// SPDX-License-Identifier: BSD-3-Clause
// Stage 03: the image tile in shared memory. The CUDA Handbook 15.4 (listing 15.5, corrShared).
//
// Changes from stage 02: each block of 32 x 8 threads first copies the image pixels its outputs
// need, a (32 + w - 1) x (8 + h - 1) tile, from the texture into shared memory (rows padded to a
// multiple of 4 bytes: the pitch), waits at a barrier, then reads every image pixel from shared
// memory. A pixel is fetched from the texture once per block instead of once per output that
// covers it (up to w*h times). When the tile does not fit in 48 KB (a very wide template), or
// the template does not fit in constant memory, the stage falls back to texture-texture, as the
// book's host code does (listing 15.6).
// You write: the tile load and the loop over the tile, in the lesson header shared_tile.cuh.
// What to look for: in the timing, 3.0x stage 02 at 16x16 on the H100 (88.3 against 267.3 us:
// with one TEX per template pixel gone from the loop, stage 02's bound); the book found this
// step slower than stage 02 on GT200 (bank conflicts on byte reads from shared memory, which
// stage 05 relieves) and 70% faster on GF100. In the SASS, LDS.U8 instead of TEX in the inner
// loop, and one BAR.SYNC after the tile's TEX loads.
#include "ncc_common.cuh"
#include "shared_tile.cuh"

namespace {

template <bool Sums>
__global__ void corr_shared(ncc::view v, ncc::output o) {
  extern __shared__ std::uint8_t tile[];
  const int x0 = blockIdx.x * ncc::tile_w, y0 = blockIdx.y * ncc::tile_h;
  ncc::load_tile(tile, v, v.tw, v.th, x0, y0);
  const int x = x0 + threadIdx.x, y = y0 + threadIdx.y;
  if (x >= v.out_w() || y >= v.out_h()) return;
  const int pitch = ncc::shared_pitch(v.tw);
  const ncc::sums3 s = ncc::correlate_bytes<ncc::imad>(tile, threadIdx.y * pitch + threadIdx.x, pitch, v.tw, v.th);
  ncc::emit(v, o, x, y, s.i, s.isq, s.it);
}

ncc::path run(const ncc::problem &p, const ncc::output &out, cudaStream_t stream) {
  const ncc::view &v = p.v();
  if (!ncc::tile_fits(v.tw, v.th) || !ncc::load_constant_template(p, stream))
    return ncc::run_tex_tex_fallback(p, out, stream);
  const std::size_t shared = ncc::shared_tile_bytes(v.tw, v.th);
  const dim3 block(ncc::tile_w, ncc::tile_h), grid(ncc::ceil_div(v.out_w(), ncc::tile_w), ncc::ceil_div(v.out_h(), ncc::tile_h));
  if (out.sums())
    corr_shared<true><<<grid, block, shared, stream>>>(v, out);
  else
    corr_shared<false><<<grid, block, shared, stream>>>(v, out);
  CUDA_CHECK_LAUNCH();
  return ncc::path::own;
}

}  // namespace

NCC_STAGE(COURSE_THIS_STAGE("image tile in shared memory (15.4)"), run);
