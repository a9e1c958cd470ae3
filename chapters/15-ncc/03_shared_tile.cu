// SPDX-License-Identifier: BSD-3-Clause
// Stage 03: the image tile in shared memory. The CUDA Handbook 15.4 (corrShared).
//
// Changes from stage 02: each block of 32 x 8 threads first copies the image pixels its outputs
// need, a (32 + w - 1) x (8 + h - 1) tile, from the texture into shared memory (rows padded to a
// multiple of 4 bytes: the pitch), waits at __syncthreads(), then reads every image pixel from
// shared memory. A pixel is fetched from the texture once per block instead of once per output
// that covers it (up to w*h times). When the tile does not fit in 48 KB (a very wide template),
// or the template does not fit in constant memory, the stage falls back to texture-texture, as
// the book's host code does.
// What to look for: in the timing, not much (the texture cache already caught the reuse, as the
// book found); in the SASS, LDS.U8 instead of TEX in the inner loop, and a BAR.SYNC.
#include "ncc_common.cuh"

namespace {

template <bool Sums>
__global__ void corr_shared(ncc::view v, ncc::output o) {
  extern __shared__ std::uint8_t tile[];
  const int pitch = ncc::shared_pitch(v.tw);
  const int x0 = blockIdx.x * ncc::tile_w, y0 = blockIdx.y * ncc::tile_h;
  const int rows = ncc::tile_h + v.th - 1, cols = ncc::tile_w + v.tw - 1;
  const int tid = threadIdx.y * blockDim.x + threadIdx.x, threads = blockDim.x * blockDim.y;
  // The tile, read through the texture: clamping takes care of the pixels past the image's edge.
  for (int k = tid; k < rows * cols; k += threads) {
    const int r = k / cols, c = k % cols;
    tile[r * pitch + c] = tex2D<unsigned char>(v.tex_image, float(x0 + c), float(y0 + r));
  }
  __syncthreads();
  const int x = x0 + threadIdx.x, y = y0 + threadIdx.y;
  if (x >= v.out_w() || y >= v.out_h()) return;
  int sum_i = 0, sum_it = 0;
  unsigned sum_isq = 0;
  // EXERCISE BEGIN: the three sums, I from the shared tile (this thread's window starts at row
  // threadIdx.y, column threadIdx.x; rows are `pitch` bytes apart), T from ncc::c_template.
  COURSE_TODO();
  // EXERCISE END
  ncc::emit(v, o, x, y, sum_i, sum_isq, sum_it);
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
