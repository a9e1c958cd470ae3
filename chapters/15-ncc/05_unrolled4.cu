// SPDX-License-Identifier: BSD-3-Clause
// Stage 05: the inner loop unrolled by 4. The CUDA Handbook 15.5.2 (corrShared4).
//
// Changes from stage 04: the loop over a template row takes 4 pixels per iteration: four image
// bytes from the shared tile and the four template bytes as one 32-bit word from constant
// memory (the template rows are padded to a multiple of 4 bytes when copied), then a short loop
// for the w % 4 pixels left. Fewer loop branches and index updates per pixel, and one constant
// load per 4 template pixels. The book's motive, shared-memory bank conflicts on byte reads,
// was SM 1.x only; the kernel stays faster for the loop overhead it removes.
// What to look for: in the timing, the best of the book's stages; in the SASS, one LDC per four
// LDS.U8 and the four IMADs per sum unrolled.
#include "ncc_common.cuh"

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

template <bool Sums>
__global__ void corr_shared4(ncc::view v, ncc::output o) {
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
  const int words = (v.tw + 3) / 4, whole = v.tw / 4;
  // EXERCISE BEGIN: per template row, `whole` iterations of 4 pixels (the template word
  // c_template4[j * words + k] holds pixels 4k..4k+3, lowest byte first), then the v.tw % 4
  // pixels left one at a time.
  COURSE_TODO();
  // EXERCISE END
  ncc::emit(v, o, x, y, sum_i, sum_isq, sum_it);
}

ncc::path run(const ncc::problem &p, const ncc::output &out, cudaStream_t stream) {
  const ncc::view &v = p.v();
  if (!ncc::tile_fits(v.tw, v.th) || !load_template4(p, stream)) return ncc::run_tex_tex_fallback(p, out, stream);
  const std::size_t shared = ncc::shared_tile_bytes(v.tw, v.th);
  const dim3 block(ncc::tile_w, ncc::tile_h), grid(ncc::ceil_div(v.out_w(), ncc::tile_w), ncc::ceil_div(v.out_h(), ncc::tile_h));
  if (out.sums())
    corr_shared4<true><<<grid, block, shared, stream>>>(v, out);
  else
    corr_shared4<false><<<grid, block, shared, stream>>>(v, out);
  CUDA_CHECK_LAUNCH();
  return ncc::path::own;
}

}  // namespace

NCC_STAGE(COURSE_THIS_STAGE("inner loop unrolled by 4 (15.5.2)"), run);
