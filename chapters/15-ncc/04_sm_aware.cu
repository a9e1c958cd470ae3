// SPDX-License-Identifier: BSD-3-Clause
// Stage 04: the "SM-aware" kernel. The CUDA Handbook 15.5.1 (corrSharedSM).
//
// Changes from stage 03: the multiply in the inner loop is a template parameter, and the host
// picks the kernel by the device's compute capability. On SM 1.x a 32-bit integer multiply took
// several instructions, while __umul24 (24 x 24 bits, enough for two bytes) was native: the book
// chose __umul24 there and the plain multiply elsewhere. Since SM 2.0 the 32-bit IMAD is the
// native one and __umul24 is emulated, so today the choice always lands on IMAD and this stage
// runs the same instructions as stage 03. The lesson that survives is the mechanism: one
// kernel template, instantiated per capability, chosen at run time from cudaDeviceProp (stage
// 07 uses the same idea for __dp4a, which needs SM 6.1).
// What to look for: the same timing and SASS as stage 03 (IMAD, no emulated 24-bit multiply).
#include "ncc_common.cuh"

namespace {

// The multiply of the inner loop, per capability.
struct imad {
  static __device__ __forceinline__ unsigned mul(unsigned a, unsigned b) { return a * b; }
};
struct mul24 {
  static __device__ __forceinline__ unsigned mul(unsigned a, unsigned b) { return __umul24(a, b); }
};

template <bool Sums, class Mul>
__global__ void corr_shared_sm(ncc::view v, ncc::output o) {
  extern __shared__ std::uint8_t tile[];
  const int pitch = ncc::shared_pitch(v.tw);
  const int x0 = blockIdx.x * ncc::tile_w, y0 = blockIdx.y * ncc::tile_h;
  const int rows = ncc::tile_h + v.th - 1, cols = ncc::tile_w + v.tw - 1;
  const int tid = threadIdx.y * blockDim.x + threadIdx.x, threads = blockDim.x * blockDim.y;
  for (int k = tid; k < rows * cols; k += threads) {
    const int r = k / cols, c = k % cols;
    tile[r * pitch + c] = tex2D<unsigned char>(v.tex_image, float(x0 + c), float(y0 + r));
  }
  __syncthreads();
  const int x = x0 + threadIdx.x, y = y0 + threadIdx.y;
  if (x >= v.out_w() || y >= v.out_h()) return;
  int sum_i = 0, sum_it = 0;
  unsigned sum_isq = 0;
  // EXERCISE BEGIN: stage 03's loop, with both multiplies done by Mul::mul.
  COURSE_TODO();
  // EXERCISE END
  ncc::emit(v, o, x, y, sum_i, sum_isq, sum_it);
}

template <class Mul>
void launch(const ncc::view &v, const ncc::output &out, cudaStream_t stream) {
  const std::size_t shared = ncc::shared_tile_bytes(v.tw, v.th);
  const dim3 block(ncc::tile_w, ncc::tile_h), grid(ncc::ceil_div(v.out_w(), ncc::tile_w), ncc::ceil_div(v.out_h(), ncc::tile_h));
  if (out.sums())
    corr_shared_sm<true, Mul><<<grid, block, shared, stream>>>(v, out);
  else
    corr_shared_sm<false, Mul><<<grid, block, shared, stream>>>(v, out);
  CUDA_CHECK_LAUNCH();
}

ncc::path run(const ncc::problem &p, const ncc::output &out, cudaStream_t stream) {
  const ncc::view &v = p.v();
  if (!ncc::tile_fits(v.tw, v.th) || !ncc::load_constant_template(p, stream))
    return ncc::run_tex_tex_fallback(p, out, stream);
  static const int major = [] {
    int device = 0, m = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&m, cudaDevAttrComputeCapabilityMajor, device));
    return m;
  }();
  if (major < 2)
    launch<mul24>(v, out, stream);  // SM 1.x: the book's bSM1 path (no CUDA 13 target has one)
  else
    launch<imad>(v, out, stream);
  return ncc::path::own;
}

}  // namespace

NCC_STAGE(COURSE_THIS_STAGE("SM-aware multiply (15.5.1)"), run);
