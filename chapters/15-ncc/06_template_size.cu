// SPDX-License-Identifier: BSD-3-Clause
// Stage 06: the template size as a compile-time parameter. The CUDA Handbook 15.7.
//
// Changes from stage 05: the kernel takes the template's width and height as template
// parameters, TW and TH (0 meaning "read it from the view at run time", stage 05's kernel), and
// the host instantiates it for 8x8 and 16x16. With the sizes known, the compiler unrolls both
// loops completely: the shared-memory offsets and the constant-memory addresses become
// immediates, the loop counters and branches disappear, and the template words are read straight
// from the constant bank as instruction operands. Other sizes run the generic kernel.
// What to look for: in the timing, the 8x8 and 16x16 rows well above stage 05; in the SASS of
// the 16x16 instance, straight-line LDS/IMAD with c[0x3][...] operands and no loop.
#include "ncc_common.cuh"

#include <type_traits>

namespace {

// The template with each row padded to a multiple of 4 bytes (zeros past w), in constant memory.
__constant__ std::uint32_t c_template4[ncc::constant_template_bytes / 4];

bool load_template4(const ncc::problem &p, cudaStream_t stream) {
  static std::uint64_t loaded = 0;
  const auto &t = p.host_template();
  const int words = (t.width + 3) / 4;
  if (std::size_t(words) * 4 * std::size_t(t.height) > std::size_t(ncc::constant_template_bytes)) return false;
  if (loaded != p.id()) {
    std::vector<std::uint8_t> padded(std::size_t(words) * 4 * std::size_t(t.height), 0);
    for (int j = 0; j < t.height; ++j)
      for (int i = 0; i < t.width; ++i) padded[std::size_t(j) * words * 4 + std::size_t(i)] = t.at(i, j);
    CUDA_CHECK(cudaMemcpyToSymbolAsync(c_template4, padded.data(), padded.size(), 0, cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    loaded = p.id();
  }
  return true;
}

template <bool Sums, int TW, int TH>
__global__ void corr_shared4(ncc::view v, ncc::output o) {
  const int tw = TW ? TW : v.tw, th = TH ? TH : v.th;
  extern __shared__ std::uint8_t tile[];
  const int pitch = ncc::shared_pitch(tw);
  const int x0 = blockIdx.x * ncc::tile_w, y0 = blockIdx.y * ncc::tile_h;
  const int rows = ncc::tile_h + th - 1, cols = ncc::tile_w + tw - 1;
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
  const int words = (tw + 3) / 4, whole = tw / 4;
  int at = threadIdx.y * pitch + threadIdx.x;
  // EXERCISE BEGIN: make stage 05's loops unroll completely when TW and TH are known: the
  // bounds below are constants then; tell the compiler to unroll (#pragma unroll) the row loop
  // and the loop over the words of a row.
  COURSE_TODO();
  // EXERCISE END
  ncc::emit(v, o, x, y, sum_i, sum_isq, sum_it);
}

ncc::path run(const ncc::problem &p, const ncc::output &out, cudaStream_t stream) {
  const ncc::view &v = p.v();
  if (!ncc::tile_fits(v.tw, v.th) || !load_template4(p, stream)) return ncc::run_tex_tex_fallback(p, out, stream);
  const std::size_t shared = ncc::shared_tile_bytes(v.tw, v.th);
  const dim3 block(ncc::tile_w, ncc::tile_h), grid(ncc::ceil_div(v.out_w(), ncc::tile_w), ncc::ceil_div(v.out_h(), ncc::tile_h));
  // The sizes compiled in; any other runs the generic instance (TW = TH = 0).
  auto launch = [&](auto tw, auto th) {
    constexpr int TW = decltype(tw)::value, TH = decltype(th)::value;
    if (out.sums())
      corr_shared4<true, TW, TH><<<grid, block, shared, stream>>>(v, out);
    else
      corr_shared4<false, TW, TH><<<grid, block, shared, stream>>>(v, out);
  };
  using k0 = std::integral_constant<int, 0>;
  using k8 = std::integral_constant<int, 8>;
  using k16 = std::integral_constant<int, 16>;
  if (v.tw == 8 && v.th == 8)
    launch(k8{}, k8{});
  else if (v.tw == 16 && v.th == 16)
    launch(k16{}, k16{});
  else
    launch(k0{}, k0{});
  CUDA_CHECK_LAUNCH();
  return ncc::path::own;
}

}  // namespace

NCC_STAGE(COURSE_THIS_STAGE("template size at compile time, 8x8 and 16x16 (15.7)"), run);
