// SPDX-License-Identifier: BSD-3-Clause
// Stage 10 (beyond the book): a bank of K templates at once, on the tensor cores (int8 MMA).
//
// Your task: searching for K templates at once (orientations, scales, or K objects) is K
// correlations of the same image, and SumIT of all of them is one matrix product: A, the image
// windows (one row per output, one column per template pixel), times B, the bank (one column per
// template). Integer tensor cores multiply bytes into exact 32-bit sums. You write the MMA
// instruction itself (m16n8k32 in inline PTX) and the kernel's loop over a band's warp tiles, k
// chunks and fragments, with A's registers read from a band of the image in shared memory
// instead of an im2col matrix in global memory (the band is there four times, each copy shifted
// by one more byte: every window starts on a word of one copy). The band load, the packing of B on
// the host, the window sums and the epilogue are given; the chapter's notes.md describes the
// fragment layout and the band.
// Watch for: the element types (a pixel of 200 is 200); which register of a lane holds which row
// and which k (the PTX ISA's fragment layout for m16n8k32); which copy of the band holds an
// output's window (its first byte's place in a word); a template whose rows do not fill the last
// chunk; the band in shared memory, which the next band overwrites; store_tile's barriers, which
// both warps of a pair must reach for every tile.
#include "ncc_common.cuh"
#include "lesson_tex_tex.cuh"

#include "common/check.h"
#include "common/memory.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

namespace {

constexpr int bank_warps = 4, bank_threads = 32 * bank_warps;
constexpr int band_rows = 8;  // output rows per band (a block walks down the image band by band)
constexpr int mt = 4;         // m-tiles per warp tile
constexpr int tile_cols = 16 * mt;        // a warp tile's outputs: 64 adjacent ones of a row
constexpr int band_cols = 2 * tile_cols;  // output columns of a block: a pair of warp tiles, 128
constexpr int max_wn = 2;                 // n-tiles per warp tile: 16 templates
constexpr int copies = 4;  // the band in shared memory, 4 times: copy s starts s bytes further

// The padded width of a template row in the k dimension: 32 consecutive k then lie in whole rows
// (widths 4, 8, 16: 8, 4, 2 rows per chunk of 32) or in one row (multiples of 32).
int row_pixels(int tw) { return tw <= 4 ? 4 : tw <= 8 ? 8 : tw <= 16 ? 16 : (tw + 31) / 32 * 32; }

// What the kernel receives (by value).
struct bank_args {
  ncc::view v;                 // the image and the template size
  const uint2 *b = nullptr;    // B fragments: [chunk][n-tile][lane], {b0, b1}
  const int *sum_t = nullptr;  // per template (padded to whole n-tiles)
  const float *rsqrt_denom_t =
      nullptr;           // (N SumTSq - SumT^2)^(-1/2) per template, 0 for a flat one
  int k = 0;             // templates in the bank
  int ntiles = 0;        // n-tiles of 8 templates in B (padded to whole blocks)
  int groups_whole = 0;  // k-groups (4 pixels) per padded template row, at least 8: where w0 wraps
  int chunks = 0;        // chunks of 32 pixels: th_pad / rows_per_chunk x groups_whole / 8
  int gc = 0;            // k-groups of one row in one chunk (at most 8)
  int rows_per_chunk = 0;              // 8 / gc
  int pitch_words = 0, tile_rows = 0;  // one copy of the band: tile_rows x pitch_words 32-bit words
  int copy_words = 0;                  // from one copy to the next (>= tile_rows x pitch_words)
  int stage_words = 0;  // after the copies: the pairs' stages, or the band's column sums
  int bands = 0;        // bands of band_rows output rows
};

// --- given: the band of the image in shared memory --------------------------------------------
// Four copies of the band, each shifted by one more byte: word c of tile row r of copy s holds
// image bytes bx0 + 4c + s .. +3 of row min(by0 + r, H - 1). A window that starts at band column
// xc is then whole words of copy xc % 4 from word xc / 4 on: every A register is one aligned LDS,
// with no funnel shift in the MMA loop (they are done here, once per band word, not once per
// A register). Rows past the image are clamped (they meet zero template rows or feed outputs that
// are not written); bytes past the row's pitch are 0 (the problem's rows are zero-padded past the
// width).
__device__ __forceinline__ void load_band(std::uint32_t *tile, const bank_args &a, int bx0,
                                          int by0) {
  const int words = a.tile_rows * a.pitch_words;
  for (int at = int(threadIdx.x); at < words; at += bank_threads) {
    const int r = at / a.pitch_words, c = at % a.pitch_words;
    const int y = min(by0 + r, a.v.height - 1), x = bx0 + 4 * c;
    const std::uint8_t *src = a.v.image + std::size_t(y) * a.v.pitch + std::size_t(x);
    const std::uint32_t lo =
        std::size_t(x) + 4 <= a.v.pitch ? *reinterpret_cast<const std::uint32_t *>(src) : 0u;
    const std::uint32_t hi =
        std::size_t(x) + 8 <= a.v.pitch ? *reinterpret_cast<const std::uint32_t *>(src + 4) : 0u;
#pragma unroll
    for (int s = 0; s < copies; ++s) tile[s * a.copy_words + at] = __funnelshift_r(lo, hi, 8 * s);
  }
}

// --- given: the epilogue ----------------------------------------------------------------------
// What the epilogue reads besides the accumulators, loaded ahead of it: a store cannot pass a load
// the compiler must keep behind it (o.coef might alias a.sum_t), so loads inside the store loop
// wait one at a time, a memory latency per coefficient.
// The block's templates' statistics (sum_t, rsqrt_denom_t of 8(nt0 + n) + j) go to shared memory
// once: loads from there are not global loads, so the compiler may take them ahead of the stores.
constexpr int max_nt = 4;  // n-tiles a block takes at most: 32 templates
struct block_templates {
  int sum_t[max_nt * 8];
  float rsqrt_denom_t[max_nt * 8];
};
template <int NT, bool Sums>
__device__ __forceinline__ void load_templates(block_templates &s, const bank_args &a, int nt0) {
  const int j =
      int(threadIdx.x);  // 8 NT <= 32 < bank_threads; the arrays are padded to whole n-tiles
  if (!Sums && j < 8 * NT)
    s.sum_t[j] = a.sum_t[8 * nt0 + j], s.rsqrt_denom_t[j] = a.rsqrt_denom_t[8 * nt0 + j];
}  // (the band loop's first barrier publishes them)

// --- given: the band's window sums ------------------------------------------------------------
// SumI and SumISq do not depend on the template, so each output's are computed once, here, for
// every template of the block, from the band already in shared memory (no pass over the image
// in global memory, no loads of them in the epilogue): sliding sums down each band column (th
// rows, for the band's rows of outputs), then along each row of outputs (tw columns). What the
// epilogue keeps per output is SumI and the inverse root of the window's variance term, 0 for a
// flat window. The column sums lie where the pairs' stages go later (the barrier between the two
// passes and the caller's after them keep the uses apart).
struct band_sums {
  int *sum_i;    // band_rows x band_cols
  float *r_var;  // (N SumISq - SumI^2)^(-1/2)
};
constexpr int outputs_a_thread = band_rows * band_cols / bank_threads;  // 8, adjacent in a row
static_assert(outputs_a_thread * bank_threads == band_rows * band_cols &&
                  band_cols % outputs_a_thread == 0,
              "the band's rows of outputs are shared evenly");
template <bool Sums>
__device__ __forceinline__ void window_sums_of_band(const std::uint32_t *tile, const bank_args &a,
                                                    std::uint32_t *cols, const band_sums &w) {
  if (Sums) return;  // (sums mode writes SumIT only: the host computes SumI and SumISq)
  const int tw = a.v.tw, th = a.v.th, vcols = band_cols + tw - 1, row_bytes = 4 * a.pitch_words;
  std::uint32_t *c1 = cols, *c2 = cols + band_rows * vcols;
  // Down the columns: byte c of a row of copy 0 is band column c.
  const auto *band = reinterpret_cast<const std::uint8_t *>(tile);
  for (int c = int(threadIdx.x); c < vcols; c += bank_threads) {
    const std::uint8_t *in = band + c, *out = band + c;  // the rows entering and leaving the window
    unsigned s1 = 0, s2 = 0;
    for (int j = 0; j < th; ++j, in += row_bytes) {
      const unsigned v = *in;
      s1 += v, s2 += v * v;
    }
    c1[c] = s1, c2[c] = s2;
    for (int r = 1; r < band_rows; ++r, in += row_bytes, out += row_bytes) {
      const unsigned vi = *in, vo = *out;
      s1 += vi - vo,
          s2 += vi * vi - vo * vo;  // (unsigned: the wrap of the difference is undone by the sum)
      c1[r * vcols + c] = s1, c2[r * vcols + c] = s2;
    }
  }
  __syncthreads();
  // Along the rows: a thread takes outputs_a_thread adjacent outputs of one row.
  constexpr int threads_a_row = band_cols / outputs_a_thread;
  const int r = int(threadIdx.x) / threads_a_row,
            x0 = int(threadIdx.x) % threads_a_row * outputs_a_thread;
  const std::uint32_t *h1 = c1 + r * vcols + x0, *h2 = c2 + r * vcols + x0;
  unsigned s1 = 0, s2 = 0;
  for (int i = 0; i < tw; ++i) s1 += h1[i], s2 += h2[i];
#pragma unroll
  for (int q = 0; q < outputs_a_thread; ++q) {
    float r_var = 0.0f;                // a flat window: 0
    if (a.v.n <= ncc::max_narrow_n) {  // exact in 32 bits there (ncc::coefficient)
      const int var_i = ncc::variance_narrow(a.v.n, int(s1), s2);
      if (var_i > 0) r_var = rsqrtf(float(var_i));
    } else {
      const long long var_i = ncc::variance_wide(a.v.n, int(s1), s2);
      if (var_i > 0) r_var = rsqrtf(float(var_i));
    }
    w.sum_i[r * band_cols + x0 + q] = int(s1);
    w.r_var[r * band_cols + x0 + q] = r_var;
    if (q + 1 < outputs_a_thread) s1 += h1[tw + q] - h1[q], s2 += h2[tw + q] - h2[q];
  }
}  // (the caller's barrier publishes them)

// acc[m][n] is the C fragment of m-tile m (the warp's outputs 16m .. +15 of row y), n-tile nt0 + n:
// the lane holds rows g and g + 8, templates 8(nt0 + n) + 2t and + 1 (c0, c1: row g; c2, c3:
// row g + 8). Writes SumIT, or the coefficient from it and the window sums.
// The coefficient is ncc::coefficient's, split by what it depends on: the window's variance term
// and its rsqrt once per output, the template's once per bank (on the host), and per (output,
// template) only the numerator, its conversion and 2 FMUL. As in ncc::coefficient, the numerator
// N SumIT - SumI SumT takes 32-bit arithmetic (Narrow) up to ncc::max_narrow_n = 363 pixels, exact
// even where N SumIT itself wraps, and 64 bits above.
// The stores: a lane's C registers hold 2 templates x 4 outputs spread over the tile, so storing
// them directly writes 8 floats of 4 planes per instruction, 8 partial sectors (the planes' rows
// start anywhere). Instead the two warps of a pair, which take the two halves of the block's 128
// columns of one output row and the same templates, put their tiles in a shared stage, template by
// output, and then the first of them writes all the pair's templates, each as one contiguous run
// of 128 outputs (512 bytes, 4 instructions of 128 bytes), while the second goes on to its next
// tile. The longer the runs, the fewer the sectors that two blocks write parts of (a plane's rows
// start anywhere, so a run's ends share a sector with the next block's): on the H100 (2026-11-27),
// writing the 130 MB of 32 planes without any arithmetic takes 81 us in runs of 256 bytes and 74 us
// in runs of 512; and the fewer the warps that store at once, the faster: 65 us when one warp of
// each pair stores (notes.md). The staging pitch, 132 words, keeps both phases free of bank
// conflicts.
constexpr int stage_pitch = band_cols + 4;
// The pair's barrier: named barrier 1 + pair for its 64 threads (0 is __syncthreads').
__device__ __forceinline__ void pair_sync(int pair) {
  if (pair == 0) asm volatile("bar.sync 1, 64;" ::: "memory");
  else asm volatile("bar.sync 2, 64;" ::: "memory");
}
template <int WN, bool Sums, bool Narrow>
__device__ __forceinline__ void store_tile(const bank_args &a, const ncc::bank_output &o,
                                           const int (&acc)[mt][WN][4], const int *sum_t,
                                           const float *rsqrt_denom_t, const int *sum_i,
                                           const float *r_var, std::uint32_t *stage, int xs, int y,
                                           int nt0, int pair, int half) {
  const int lane = int(threadIdx.x) & 31, g = lane >> 2, t = lane & 3;
  const int wo = a.v.out_w();
  int si[mt][2] = {};  // the window sums of the lane's outputs 16m + 8h + g
  float rv[mt][2] = {};
#pragma unroll
  for (int m = 0; m < mt; ++m)
#pragma unroll
    for (int h = 0; h < 2; ++h)
      if (!Sums) si[m][h] = sum_i[16 * m + 8 * h + g], rv[m][h] = r_var[16 * m + 8 * h + g];
  pair_sync(pair);  // both warps are done reading the stage (the pair's previous tiles)
#pragma unroll
  for (int n = 0; n < WN; ++n)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int j = 8 * n + 2 * t + e;
#pragma unroll
      for (int m = 0; m < mt; ++m)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int sum_it = acc[m][n][2 * h + e], x = tile_cols * half + 16 * m + 8 * h + g;
          std::uint32_t v = std::uint32_t(sum_it);
          if (!Sums) {
            const float num = Narrow
                                  ? float(ncc::numerator_narrow(a.v.n, si[m][h], sum_it, sum_t[j]))
                                  : float(ncc::numerator_wide(a.v.n, si[m][h], sum_it, sum_t[j]));
            v = __float_as_uint(num * (rv[m][h] * rsqrt_denom_t[j]));
          }
          stage[j * stage_pitch + x] = v;
        }
    }
  pair_sync(pair);  // the stage holds both halves
  // The pair's first warp stores its templates 8 nt0 + i (i < 8 WN), one plane apart: lane c of
  // instruction q output xs + 32 q + c of the pair's row (xs: its first column). (The two warps
  // storing half of them each took 1 us longer for the bank call: notes.md.)
  if (half != 0) return;
  const std::size_t plane = std::size_t(wo) * std::size_t(a.v.out_h());
  const int cols = min(band_cols, wo - xs);  // the pair's columns (none past the image)
  std::uint32_t *out = reinterpret_cast<std::uint32_t *>(Sums ? static_cast<void *>(o.sum_it)
                                                              : static_cast<void *>(o.coef));
  const int real = a.k - 8 * nt0;  // templates to store: no padding
  // (One test of the template per run, before its stores: a form that tested it in every store's
  // predicate and stepped one pointer a plane at a time took 102 us for the bank call, this 83.)
  // (Each run's address from the warp's first, a plane per template: level with each from its
  // template's index, or up to 1 us faster for the bank call. ptxas computes each store's address
  // in full under its predicate; forms that take a run's address once and store at fixed offsets
  // from it, with fewer instructions, took 15 us longer: notes.md.)
  std::uint32_t *first =
      out + (std::size_t(8 * nt0) * plane + std::size_t(y) * std::size_t(wo) + std::size_t(xs));
#pragma unroll
  for (int j = 0; j < 8 * WN; ++j) {
    if (j >= real) break;
    std::uint32_t *run = first + std::size_t(j) * plane;
#pragma unroll
    for (int q = 0; q < band_cols / 32; ++q)
      if (32 * q + lane < cols)  // streaming stores: the planes are not read again here
        __stcs(run + 32 * q + lane, stage[j * stage_pitch + 32 * q + lane]);
  }
}

// c += a b for one m16n8k32 tile: a the lane's 4 registers of A (16 x 32 bytes, row-major), b its
// 2 of B (32 x 8 bytes, column-major), c its 4 accumulators (16 x 8). Pixels are unsigned bytes.
__device__ __forceinline__ void mma_u8(int (&c)[4], const std::uint32_t (&a)[4],
                                       const std::uint32_t (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  __trap();  // int8 m16n8k32 needs SM 8.0: the host sees this code's version and never launches it
#else
  // EXERCISE BEGIN: c += a b for one m16n8k32 tile of unsigned bytes, in inline PTX.
  COURSE_TODO();
  // EXERCISE END
#endif
}

// Band k of a block: whole rounds of gridDim.z bands first (band blockIdx.z + k gridDim.z, of
// band_rows rows), then the block's even share of the rows left after them, band_rows at a time.
__device__ __forceinline__ bool band_of(const bank_args &a, int k, int &by0, int &rows) {
  const int z = int(blockIdx.z), gz = int(gridDim.z), h = a.v.out_h();
  const int rounds = h / band_rows / gz;
  if (k < rounds) {
    by0 = (k * gz + z) * band_rows, rows = band_rows;
    return true;
  }
  const int rest0 = rounds * gz * band_rows, rest = h - rest0;
  const int r0 = rest0 + rest * z / gz, r1 = rest0 + rest * (z + 1) / gz;
  by0 = r0 + (k - rounds) * band_rows, rows = min(band_rows, r1 - by0);
  return rows > 0;
}

// One block: 128 output columns (bx0..) x the templates of n-tiles nt0 .. nt0 + NT - 1, over its
// bands (band_of). Its warps work in pairs: a warp tile is one output row of the band, the pair's
// half of the columns (64: mt = 4 m-tiles) and WN n-tiles (16 templates, or 8 when NT = 1).
template <int NT, bool Sums>
__global__ void __launch_bounds__(bank_threads) corr_bank_mma(bank_args a, ncc::bank_output o) {
  constexpr int WN = NT < max_wn ? NT : max_wn;
  extern __shared__ std::uint32_t tile[];
  const int lane = int(threadIdx.x) & 31, warp = int(threadIdx.x) >> 5;
  const int pair = warp >> 1, half = warp & 1;  // the warp's pair, and its half of the columns
  // After the band's copies: each pair's stage (8 WN rows of stage_pitch), where the band's column
  // sums are before the tiles; then the band's window sums.
  std::uint32_t *stages = tile + copies * a.copy_words,
                *stage = stages + pair * (8 * WN * stage_pitch);
  const band_sums w{reinterpret_cast<int *>(stages + a.stage_words),
                    reinterpret_cast<float *>(stages + a.stage_words) + band_rows * band_cols};
  const int g = lane >> 2, t = lane & 3;  // the fragment coordinates: groupID, thread in group
  const int bx0 = int(blockIdx.x) * band_cols, nt0 = int(blockIdx.y) * NT;
  // Where the lane's two k-groups of a chunk (u = t and u = t + 4: 4 pixels each) lie in a copy of
  // the band, in words from the window's first word: row u / gc, word u % gc of the row.
  const int lane_word[2] = {(t / a.gc) * a.pitch_words + t % a.gc,
                            ((t + 4) / a.gc) * a.pitch_words + (t + 4) % a.gc};
  __shared__ block_templates ts;
  load_templates<NT, Sums>(ts, a, nt0);
  int by0 = 0, rows = 0;
  for (int k = 0; band_of(a, k, by0, rows); ++k) {
    load_band(tile, a, bx0, by0);
    __syncthreads();
    window_sums_of_band<Sums>(tile, a, stages, w);
    if (!Sums) __syncthreads();  // the window sums are there before any warp's epilogue reads them
    // EXERCISE BEGIN: SumIT of each of the band's tiles for the block's templates, by MMA with the
    // A fragments read from the band in shared memory, each tile handed to store_tile.
    COURSE_TODO();
    // EXERCISE END
  }
}

// --- the host side ------------------------------------------------------------------------------
// What the stage keeps per problem (or per bank): the bank packed as B fragments, the template
// statistics, the window sums' workspace (sums mode), the kernel's geometry; per-template
// problems for the fallback where the kernel cannot run (code for an SM below 8.0, or a band over
// the GPU's opt-in shared memory: 64 KB on a T4, 99 KB on RTX 30, 40 and 50 cards, 227 KB on an
// H100 or H200).
struct bank_state {
  explicit bank_state(const ncc::problem &p)
      : bank_state(p, std::vector<course::gray_image>{p.host_template()}, nullptr) {}
  explicit bank_state(const ncc::bank_problem &b)
      : bank_state(b.image(), b.templates(), &b.host_image()) {}

  // host_image: for the fallback of a bank (one problem per template), if it is needed.
  bank_state(const ncc::problem &image, const std::vector<course::gray_image> &templates,
             const course::gray_image *host_image)
      : rows(2 * std::size_t(image.v().height) * std::size_t(image.v().out_w())),
        k(int(templates.size())) {
    const ncc::view &v = image.v();
    const int tw = v.tw, th = v.th, tw_pad = row_pixels(tw);
    args.k = k;
    const int groups = tw_pad / 4;  // k-groups (4 pixels) per padded template row
    args.gc = std::min(groups, 8);
    args.rows_per_chunk = 8 / args.gc;
    const int th_pad = (th + args.rows_per_chunk - 1) / args.rows_per_chunk * args.rows_per_chunk;
    const int wchunks = groups / args.gc;  // chunks per row group: 1, or tw_pad / 32
    const int chunks = th_pad / args.rows_per_chunk * wchunks;
    args.groups_whole = 8 * wchunks;
    args.chunks = chunks;
    // A copy of the band: every word the warps read (notes.md derives it): band_cols / 4 - 1 +
    // groups words a row, and every byte of the outputs' windows (band_cols + tw - 1, for the
    // window sums from copy 0), band_rows + th_pad - 1 rows. The pitch and the distance between
    // copies are padded so that the 32 lanes' A loads hit distinct banks (or share a word): copies
    // 8 banks apart, rows 4 (2 when a chunk spans 8 rows) apart modulo 8.
    const int residue = args.gc == 1 ? 2 : 4;
    args.pitch_words = std::max(band_cols / 4 + groups - 1, (band_cols + tw - 1 + 3) / 4);
    args.pitch_words += ((residue - args.pitch_words) % 8 + 8) % 8;
    args.tile_rows = band_rows + th_pad - 1;
    args.copy_words = args.tile_rows * args.pitch_words;
    args.copy_words += ((8 - args.copy_words) % 32 + 32) % 32;
    args.bands = (v.out_h() + band_rows - 1) / band_rows;
    const int ntiles = (k + 7) / 8;
    // n-tiles per block: 1, 2 or 4 (32 templates): each A fragment feeds NT MMAs.
    nt = ntiles >= max_nt ? max_nt : ntiles >= 2 ? 2 : 1;
    args.ntiles = (ntiles + nt - 1) / nt * nt;

    // B in fragment order: chunk c covers template rows j0 = (c / wchunks) * rows_per_chunk ..
    // and words w0 = (c % wchunks) * 8 ..; lane (g, t) of n-tile n holds template 8n + g, its
    // k-groups u = t (b0) and t + 4 (b1), each 4 pixels of row j0 + u / gc from 4 (w0 + u % gc).
    // (One chunk more, of zeros: the kernel loads each chunk's fragments a chunk ahead.)
    std::vector<uint2> frags(std::size_t(chunks + 1) * std::size_t(args.ntiles) * 32);
    for (int c = 0; c < chunks; ++c)
      for (int n = 0; n < args.ntiles; ++n)
        for (int lane = 0; lane < 32; ++lane) {
          const int g = lane >> 2, t = lane & 3, kk = 8 * n + g;
          std::uint32_t w[2] = {0, 0};
          for (int r = 0; r < 2; ++r) {
            const int u = t + 4 * r;
            const int j = c / wchunks * args.rows_per_chunk + u / args.gc,
                      i = 4 * ((c % wchunks) * 8 + u % args.gc);
            for (int b = 0; b < 4; ++b)
              if (kk < k && j < th && i + b < tw)
                w[r] |= std::uint32_t(templates[std::size_t(kk)].at(i + b, j)) << (8 * b);
          }
          frags[(std::size_t(c) * std::size_t(args.ntiles) + std::size_t(n)) * 32 +
                std::size_t(lane)] = uint2{w[0], w[1]};
        }
    std::vector<int> sum_t(std::size_t(args.ntiles) * 8, 0);
    std::vector<float> rsqrt_denom_t(sum_t.size(),
                                     0.0f);  // 0: a flat template (or padding) gives 0
    for (int kk = 0; kk < k; ++kk) {
      const ncc::template_stats s = ncc::stats_of(templates[std::size_t(kk)]);
      sum_t[std::size_t(kk)] = int(s.sum);
      if (s.denom() > 0) rsqrt_denom_t[std::size_t(kk)] = float(1.0 / std::sqrt(double(s.denom())));
    }
    b = course::device_buffer<uint2>(frags.size());
    d_sum_t = course::device_buffer<int>(sum_t.size());
    d_rsqrt_denom_t = course::device_buffer<float>(rsqrt_denom_t.size());
    CUDA_CHECK(
        cudaMemcpy(b.get(), frags.data(), frags.size() * sizeof(uint2), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_sum_t.get(), sum_t.data(), sum_t.size() * sizeof(int),
                          cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_rsqrt_denom_t.get(), rsqrt_denom_t.data(),
                          rsqrt_denom_t.size() * sizeof(float), cudaMemcpyHostToDevice));
    args.b = b.get(), args.sum_t = d_sum_t.get(), args.rsqrt_denom_t = d_rsqrt_denom_t.get();

    int device = 0, optin = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    // After the copies: the pairs' stages, or the band's column sums (SumI and SumISq of th rows,
    // band_rows x (band_cols + tw - 1) of each) before them; then SumI and the variance's inverse
    // root of the band's outputs.
    args.stage_words = std::max(bank_warps / 2 * 8 * std::min(nt, max_wn) * stage_pitch,
                                2 * band_rows * (band_cols + tw - 1));
    smem = (std::size_t(copies) * std::size_t(args.copy_words) + std::size_t(args.stage_words) +
            2 * band_rows * band_cols) *
           sizeof(std::uint32_t);
    // The kernel's own code decides, not the GPU's compute capability: code compiled for an SM
    // below 8.0 (a T4, or a build whose older PTX the driver compiles for a newer GPU) has the
    // trap in mma_u8, not the MMA.
    cudaFuncAttributes code{};
    CUDA_CHECK(cudaFuncGetAttributes(&code, corr_bank_mma<1, false>));
    runs = code.ptxVersion >= 80 && smem <= std::size_t(optin);
    if (!runs && host_image)  // the fallback of a bank: one problem per template
      for (const auto &t : templates)
        fallback.push_back(std::make_unique<ncc::problem>(*host_image, t));
    // The copies above are from pageable memory: wait, so work on any stream sees them.
    CUDA_CHECK(cudaDeviceSynchronize());
  }

  course::device_buffer<unsigned> rows;  // ncc::window_sums' row sums (sums mode)
  int k = 0, nt = 1, sms = 1;
  bank_args args;
  course::device_buffer<uint2> b;
  course::device_buffer<int> d_sum_t;
  course::device_buffer<float> d_rsqrt_denom_t;
  std::size_t smem = 0;
  bool runs = false;
  mutable int occupancy[3][2] =
      {};  // blocks per SM of each kernel instance ([NT / 2]: NT 1, 2, 4; Sums), once known
  std::vector<std::unique_ptr<ncc::problem>> fallback;
};

template <int NT, bool Sums>
void launch(const bank_state &st, bank_args a, const ncc::bank_output &out, cudaStream_t stream) {
  auto kernel = corr_bank_mma<NT, Sums>;
  static std::size_t allowed = 48 * 1024;  // dynamic shared memory this instance may take now
  if (st.smem > allowed) {
    CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(st.smem)));
    allowed = st.smem;
  }
  int &blocks_per_sm = st.occupancy[NT / 2][Sums ? 1 : 0];
  if (blocks_per_sm == 0) {
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, kernel, bank_threads,
                                                             st.smem));
    blocks_per_sm = std::max(1, blocks_per_sm);
  }
  // At most as many blocks as fit on the GPU at once (one wave), each walking its bands (band_of:
  // whole rounds, then an even share of the rows left, so that no block takes a band more than
  // another); at least 2 bands a block (so that blocks reuse their shared band even on small
  // images: the barrier at the end of a band is exercised). That floor can leave SMs short: 512
  // blocks at 16x16 on 1024x1024, where 660 would fit on an H200 or H100 (132 SMs; filling them
  // measured the same on the H100, 2026-11-27).
  const unsigned gx = ncc::ceil_div(a.v.out_w(), band_cols), gy = unsigned(a.ntiles / NT);
  const long long resident = (long long)st.sms * blocks_per_sm;
  const long long fit = std::max(1LL, resident / ((long long)gx * gy));
  const unsigned gz = unsigned(std::max(1LL, std::min(fit, ((long long)a.bands + 1) / 2)));
  kernel<<<dim3(gx, gy, gz), bank_threads, st.smem, stream>>>(a, out);
  CUDA_CHECK_LAUNCH();
}

ncc::path run_bank_state(const bank_state &st, const ncc::view &v, const ncc::bank_output &out,
                         cudaStream_t stream) {
  // In sums mode SumI and SumISq are outputs: the chapter's window sums (the kernel writes SumIT);
  // the coefficient's come from the kernel's bands.
  if (out.sums())
    ncc::window_sums(v, out.sum_i, reinterpret_cast<unsigned *>(out.sum_isq), st.rows.get(),
                     stream);
  bank_args a = st.args;
  a.v = v;
  auto go = [&](auto nt) {
    constexpr int NT = decltype(nt)::value;
    if (out.sums()) launch<NT, true>(st, a, out, stream);
    else launch<NT, false>(st, a, out, stream);
  };
  if (st.nt == 1) go(std::integral_constant<int, 1>{});
  else if (st.nt == 2) go(std::integral_constant<int, 2>{});
  else go(std::integral_constant<int, 4>{});
  return ncc::path::own;
}

// The chapter's entry: a bank of one template.
ncc::path run(const ncc::problem &p, const ncc::output &out, cudaStream_t stream) {
  const bank_state &st = p.cache<bank_state>("10_tensor_bank");
  if (!st.runs) return ncc::run_tex_tex_fallback(p, out, stream);
  ncc::bank_output bo;
  bo.coef = out.coef, bo.sum_i = out.sum_i, bo.sum_isq = out.sum_isq, bo.sum_it = out.sum_it;
  return run_bank_state(st, p.v(), bo, stream);
}

// The bank's entry: K templates in one call.
ncc::path run_bank(const ncc::bank_problem &b, const ncc::bank_output &out, cudaStream_t stream) {
  const bank_state &st = b.cache<bank_state>("10_tensor_bank");
  if (st.runs) return run_bank_state(st, b.v(), out, stream);
  const std::size_t plane = b.outputs();
  for (int k = 0; k < b.count(); ++k) {
    const ncc::problem &p = st.fallback.empty() ? b.image() : *st.fallback[std::size_t(k)];
    ncc::output o;
    if (out.sums())
      o.sum_i = out.sum_i, o.sum_isq = out.sum_isq, o.sum_it = out.sum_it + std::size_t(k) * plane;
    else o.coef = out.coef + std::size_t(k) * plane;
    ncc::run_tex_tex_fallback(p, o, stream);
  }
  return ncc::path::tex_tex_fallback;
}

}  // namespace

NCC_STAGE("a bank of templates on the tensor cores, int8 MMA (beyond the book)", run);
NCC_BANK_STAGE("a bank of templates on the tensor cores, int8 MMA (beyond the book)", run_bank);
