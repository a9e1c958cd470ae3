// SPDX-License-Identifier: BSD-3-Clause
// Stage 08 (beyond the book): __dp4a with register blocking.
//
// Changes from stage 07: each thread computes a 4 x R block of outputs (four shifts, R rows): each
// image row is loaded once for the R outputs whose windows hold it, and its window sums are taken
// once for all of them (the rows all R outputs hold, once in all). At the compiled-in sizes the
// image's words meet the template's own words: word k of shift a's window is one funnel shift (SHF)
// of image words k and k + 1, so a row takes tw/4 dp4a a shift where stage 07's shifted template
// takes tw/4 + 1, and a quarter of the constant words. The host picks R: 4 from 12x12 to 20x20
// where the grid leaves each SM 3 blocks or more, 2 otherwise; sizes not compiled in run a generic
// kernel with the same blocking (notes.md says how each choice was made). What to look for: in the
// SASS of the 16x16 instance with 4 rows, long runs of IDP.4A and SHF between few LDG, and 80
// registers per thread (`make sass-count`); in the progression table, the chapter's best at
// 16x16; in vs_NPP_by_template, this stage against 07 and the generic rows from 40x40; in the
// profile, the warp instructions against stage 07's.
#include "ncc_common.cuh"
#include "lesson_dp4a.cuh"

namespace {

#ifndef NCC_DP4A_ROWS
#define NCC_DP4A_ROWS \
  4  // rows per thread where the grid fills the GPU; -DNCC_DP4A_ROWS=... to time others
#endif
constexpr int default_rows = NCC_DP4A_ROWS;  // output rows per thread (R), but 2 at 32x32
#ifndef NCC_DP4A_FILL_ROWS
#define NCC_DP4A_FILL_ROWS 2  // R where the grid of default_rows leaves SMs short
#endif
constexpr int fill_rows = default_rows > NCC_DP4A_FILL_ROWS ? NCC_DP4A_FILL_ROWS : default_rows;

using ncc::dp4a_bx;
using ncc::dp4a_by;

// Writes a thread's outputs (x0 + a, y0 + i), those inside the output: the three sums, or the
// coefficient (both kernels below end with it).
template <bool Sums, int R>
__device__ __forceinline__ void store_outputs(const ncc::view &v, const ncc::output &o, int x0,
                                              int y0, const unsigned (&acc)[R][4],
                                              const unsigned (&s1)[R][4],
                                              const unsigned (&s2)[R][4]) {
  const int wo = v.out_w(), ho = v.out_h();
#pragma unroll
  for (int i = 0; i < R; ++i) {
    const int y = y0 + i;
    if (y >= ho) break;
#pragma unroll
    for (int a = 0; a < 4; ++a) {
      const int x = x0 + a;
      if (x >= wo) break;
      const std::size_t at = std::size_t(y) * std::size_t(wo) + std::size_t(x);
      if (Sums) {
        o.sum_i[at] = int(s1[i][a]);
        o.sum_isq[at] = int(s2[i][a]);
        o.sum_it[at] = int(acc[i][a]);
      } else {
        o.coef[at] =
            ncc::coefficient(v.n, int(s1[i][a]), s2[i][a], int(acc[i][a]), v.sum_t, v.denom_t);
      }
    }
  }
}

template <bool Sums, int TW, int TH, int R>
__global__ void __launch_bounds__(dp4a_bx *dp4a_by)
    corr_dp4a_blocked(ncc::view v, ncc::output o, const std::uint32_t *g_shift) {
  const int tw = TW ? TW : v.tw, th = TH ? TH : v.th;
  const int nw = ncc::words_per_row(tw);
  const int x0 = 4 * int(blockIdx.x * dp4a_bx + threadIdx.x),
            y0 = int(blockIdx.y * dp4a_by + threadIdx.y) * R;
  const int wo = v.out_w(), ho = v.out_h();
  if (x0 >= wo || y0 >= ho) return;
  unsigned acc[R][4], s1[R][4], s2[R][4];  // SumIT, SumI, SumISq of output (x0 + a, y0 + i)
#pragma unroll
  for (int i = 0; i < R; ++i) {
#pragma unroll
    for (int a = 0; a < 4; ++a) acc[i][a] = s1[i][a] = s2[i][a] = 0;
  }
  // EXERCISE BEGIN: R rows of outputs at once: each image row loaded once, its words shifted to
  // meet the template's own words, its window sums taken once for every output that holds it.
  static_assert(TW > 0 && TW % 4 == 0, "the compiled-in sizes are multiples of 4");
  const int nt = nw - 1;  // template words a row: shift 0's words 0 .. nt - 1 (its word nt is 0)
  // The window sums of the rows every one of the R outputs holds (j = R - 1 .. th - 1), summed
  // once for all of them: those of the words inside all four windows, and per shift those of its
  // edge bytes (below).
  unsigned c1 = 0, c2 = 0, e1[4] = {0, 0, 0, 0}, e2[4] = {0, 0, 0, 0};
#pragma unroll
  for (int j = 0; j < th + R - 1; ++j) {
    const int row = min(y0 + j, v.height - 1);
    const std::uint32_t *src =
        reinterpret_cast<const std::uint32_t *>(v.image + std::size_t(row) * v.pitch + x0);
    std::uint32_t w[TW / 4 + 1];  // the nt + 1 words the four windows span
#pragma unroll
    for (int k = 0; k <= nt; ++k) {
      w[k] = __ldg(src + k);
    }
    // SumIT: shift a's window holds the row's bytes a .. a + tw - 1. Its word k, bytes 4k + a ..
    // 4k + a + 3, is one funnel shift of w[k] and w[k + 1], and meets the template's word k as it
    // is: nt dp4a a shift where stage 07's shifted template takes nt + 1.
#pragma unroll
    for (int k = 0; k < nt; ++k) {
#pragma unroll
      for (int a = 0; a < 4; ++a) {
        const std::uint32_t sw = a == 0 ? w[k] : __funnelshift_r(w[k], w[k + 1], 8 * a);
#pragma unroll
        for (int i = 0; i < R; ++i) {
          const int r = j - i;
          if (r < 0 || r >= th) continue;
          acc[i][a] = __dp4a(sw, ncc::template_word<TW>(g_shift, r * nw + k), acc[i][a]);
        }
      }
    }
    // The window sums: words 1 .. nt - 1 lie inside all four windows (as in stage 07). Shift a's
    // other bytes are bytes a .. 3 of w[0] and 0 .. a - 1 of w[nt]: one byte permute puts them in
    // one word, two dp4a a shift.
    const bool every = j >= R - 1 && j < th;  // all R outputs hold this row
    unsigned in1 = 0, in2 = 0;
#pragma unroll
    for (int k = 1; k < nt; ++k) {
      if (every) c1 = __dp4a(w[k], 0x01010101u, c1), c2 = __dp4a(w[k], w[k], c2);
      else in1 = __dp4a(w[k], 0x01010101u, in1), in2 = __dp4a(w[k], w[k], in2);
    }
#pragma unroll
    for (int a = 0; a < 4; ++a) {
      // byte b of the result: byte b of w[nt] (selector 4 + b) where b < a, of w[0] (b) elsewhere
      const std::uint32_t select = 0x3210u + (0x4444u & ((1u << (4 * a)) - 1u));
      const std::uint32_t edge = a == 0 ? w[0] : __byte_perm(w[0], w[nt], select);
      if (every) {
        e1[a] = __dp4a(edge, 0x01010101u, e1[a]), e2[a] = __dp4a(edge, edge, e2[a]);
        continue;
      }
      const unsigned h1 = __dp4a(edge, 0x01010101u, in1), h2 = __dp4a(edge, edge, in2);
#pragma unroll
      for (int i = 0; i < R; ++i) {
        const int r = j - i;
        if (r < 0 || r >= th) continue;
        s1[i][a] += h1, s2[i][a] += h2;
      }
    }
  }
#pragma unroll
  for (int i = 0; i < R; ++i) {
#pragma unroll
    for (int a = 0; a < 4; ++a) s1[i][a] += c1 + e1[a], s2[i][a] += c2 + e2[a];
  }
  // EXERCISE END
  store_outputs<Sums, R>(v, o, x0, y0, acc, s1, s2);
}

// The generic instance: any template size, known only at run time (not compiled in). The
// loops cannot unroll, so what the compiler folds away in a compiled-in size must be arranged by
// hand, or each image word costs several times its dp4a:
//  - the template words: the block copies the shifted template to shared memory, the four shifts
//    of a word side by side, so that one 16-byte load (the same address in every lane: a
//    broadcast) gives an output row its four words. From the constant bank the same loop runs
//    several times slower once the template outgrows the constant cache (a 52x52 template has
//    11.4 KB of shifted words); from global memory it takes four loads where this takes one.
//  - the window sums: a window mask per shift and word is some ten instructions at run time.
//    Instead each image row is summed over all its nw words (two dp4a a word, the same for every
//    shift), and each shift takes off the bytes outside its window: the first `a` bytes of word 0
//    and the bytes past a + tw, which lie in the last two words (4 nw - tw - a <= 6).
//  - the rows of the R outputs: only the first and last R - 1 image rows feed fewer than R of
//    them, so those rows run a loop that tests each, and the others one that does not.
// Shared = false (a template too large for shared memory) reads the words from global memory.
constexpr int generic_shared_bytes = 48 * 1024;  // the most a block may take without opting in

template <bool Sums, int R, bool Shared>
__global__ void __launch_bounds__(dp4a_bx *dp4a_by)
    corr_dp4a_generic(ncc::view v, ncc::output o, const std::uint32_t *g_shift) {
  extern __shared__ uint4 s_shift[];  // word k of row r, shifts 0..3: s_shift[r * nw + k]
  const int tw = v.tw, th = v.th;
  const int nw = ncc::words_per_row(tw);
  const int x0 = 4 * int(blockIdx.x * dp4a_bx + threadIdx.x),
            y0 = int(blockIdx.y * dp4a_by + threadIdx.y) * R;
  const int wo = v.out_w(), ho = v.out_h();
  if (Shared) {
    const int plane = th * nw, tid = int(threadIdx.y * dp4a_bx + threadIdx.x);
    for (int at = tid; at < plane; at += dp4a_bx * dp4a_by)
      s_shift[at] = make_uint4(g_shift[at], g_shift[plane + at], g_shift[2 * plane + at],
                               g_shift[3 * plane + at]);
    __syncthreads();
  }
  if (x0 >= wo || y0 >= ho) return;
  unsigned acc[R][4], s1[R][4], s2[R][4];  // SumIT, SumI, SumISq of output (x0 + a, y0 + i)
#pragma unroll
  for (int i = 0; i < R; ++i) {
#pragma unroll
    for (int a = 0; a < 4; ++a) acc[i][a] = s1[i][a] = s2[i][a] = 0;
  }
  // EXERCISE BEGIN: the register-blocked loop for a template size known only at run time, without
  // paying at run time for what the compiled-in instances fold away.
  auto past_mask = [](int k, int e) {  // the bytes of word k at or past byte e of the row
    const int c = e - 4 * k;           // the first of them in word k
    return c <= 0 ? 0xFFFFFFFFu : c >= 4 ? 0u : ~((1u << (8 * c)) - 1u);
  };
  auto image_row = [&](int j, auto every_output) {
    constexpr bool all = decltype(every_output)::value;  // all R outputs take this row
    const int row = min(y0 + j, v.height - 1);
    const std::uint32_t *src =
        reinterpret_cast<const std::uint32_t *>(v.image + std::size_t(row) * v.pitch + x0);
    unsigned f1 = 0, f2 = 0;  // SumI, SumISq of the row's nw words
    for (int k = 0; k < nw; ++k) {
      const std::uint32_t w = __ldg(src + k);
      f1 = __dp4a(w, 0x01010101u, f1);
      f2 = __dp4a(w, w, f2);
#pragma unroll
      for (int i = 0; i < R; ++i) {
        const int r = j - i;
        if (!all && (r < 0 || r >= th)) continue;
        uint4 t;
        if (Shared) {
          t = s_shift[r * nw + k];
        } else {
          const int plane = th * nw, at = r * nw + k;
          t = make_uint4(__ldg(g_shift + at), __ldg(g_shift + plane + at),
                         __ldg(g_shift + 2 * plane + at), __ldg(g_shift + 3 * plane + at));
        }
        acc[i][0] = __dp4a(w, t.x, acc[i][0]);
        acc[i][1] = __dp4a(w, t.y, acc[i][1]);
        acc[i][2] = __dp4a(w, t.z, acc[i][2]);
        acc[i][3] = __dp4a(w, t.w, acc[i][3]);
      }
    }
    const std::uint32_t first = __ldg(src), next = __ldg(src + max(nw - 2, 0)),
                        last = __ldg(src + nw - 1);
#pragma unroll
    for (int a = 0; a < 4; ++a) {
      const std::uint32_t before = (1u << (8 * a)) - 1u;  // bytes 0..a-1 of word 0
      const std::uint32_t x = first & before, y = nw >= 2 ? next & past_mask(nw - 2, a + tw) : 0u,
                          z = last & past_mask(nw - 1, a + tw);
      const unsigned h1 =
          f1 - __dp4a(x, 0x01010101u, __dp4a(y, 0x01010101u, __dp4a(z, 0x01010101u, 0u)));
      const unsigned h2 = f2 - __dp4a(x, first, __dp4a(y, next, __dp4a(z, last, 0u)));
#pragma unroll
      for (int i = 0; i < R; ++i) {
        const int r = j - i;
        if (!all && (r < 0 || r >= th)) continue;
        s1[i][a] += h1, s2[i][a] += h2;
      }
    }
  };
  int j = 0;
  for (; j < R - 1; ++j) image_row(j, std::false_type{});       // feeds outputs 0..j only
  for (; j < th; ++j) image_row(j, std::true_type{});           // feeds all R
  for (; j < th + R - 1; ++j) image_row(j, std::false_type{});  // feeds outputs j - th + 1..R - 1
  // EXERCISE END
  store_outputs<Sums, R>(v, o, x0, y0, acc, s1, s2);
}

// What the stage keeps per problem: stage 07's shifted template, and the rows per thread chosen for
// the problem's size on its GPU, per mode (coefficients, sums), once known.
struct blocked_state {
  explicit blocked_state(const ncc::problem &p) : dp4a(p) {}
  ncc::dp4a_state dp4a;
  int rows[2] = {0, 0};
};

dim3 grid_of(const ncc::view &v, int rows) {
  return dim3(ncc::ceil_div(v.out_w(), 4 * dp4a_bx), ncc::ceil_div(v.out_h(), rows * dp4a_by));
}

// Whether a grid of `rows`-row blocks fills the GPU: `per_sm` blocks or more for each of its SMs
// (the GPU's SM count, so the choice follows the device).
bool fills_gpu(const ncc::view &v, int rows, int per_sm) {
  int device = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const dim3 grid = grid_of(v, rows);
  return (long long)grid.x * grid.y >= (long long)sms * per_sm;
}

// The blocks of `kernel` an SM holds at once, as its registers and shared memory allow.
template <class Kernel>
int resident_per_sm(Kernel kernel, std::size_t shared) {
  int per_sm = 0;
  CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, dp4a_bx * dp4a_by, shared));
  return per_sm;
}

// The blocks an SM needs for a compiled-in kernel to take R rows: 3 (12 warps). On the 1024x1024
// image (3.8 to 3.9 blocks of 4 rows an SM) 4 rows ran faster than 2 from 12x12 to 20x20.
constexpr int compiled_blocks_per_sm = 3;

using kernel = void (*)(ncc::view, ncc::output, const std::uint32_t *);

ncc::path run(const ncc::problem &p, const ncc::output &out, cudaStream_t stream) {
  const ncc::view &v = p.v();
  blocked_state &st = p.cache<blocked_state>("08_register_blocked");
  st.dp4a.load_constant(p.id(), stream);
  const std::uint32_t *shift = st.dp4a.shift.get();
  ncc::launch_by_size(v, st.dp4a, [&](auto tw, auto th) {
    constexpr int TW = decltype(tw)::value, TH = decltype(th)::value;
    // 2 rows at 8x8, where 4 are too little work a thread to pay for half the warps, and from
    // 24x24, where NVVM leaves the loop of 4 rows rolled (notes.md has both measured).
    constexpr int R = (TW == 8 || TW >= 24 || TH >= 24) && default_rows > 2 ? 2 : default_rows;
    constexpr int F = R < fill_rows ? R : fill_rows;
    auto launch = [&](auto sums) {
      constexpr bool S = decltype(sums)::value;
      kernel wide = nullptr, narrow = nullptr;  // R rows a thread, F rows a thread
      // the generic instance's shifted template in shared memory: 16 bytes a word of a row
      std::size_t shared =
          TW != 0 ? 0 : std::size_t(v.th) * std::size_t(ncc::words_per_row(v.tw)) * sizeof(uint4);
      if constexpr (TW != 0)
        wide = corr_dp4a_blocked<S, TW, TH, R>, narrow = corr_dp4a_blocked<S, TW, TH, F>;
      else if (shared <= std::size_t(generic_shared_bytes))
        wide = corr_dp4a_generic<S, R, true>, narrow = corr_dp4a_generic<S, F, true>;
      else
        wide = corr_dp4a_generic<S, R, false>, narrow = corr_dp4a_generic<S, F, false>, shared = 0;
      int &rows = st.rows[S ? 1 : 0];
      // The generic kernel takes R rows where each SM gets as many blocks as it holds, but for one.
      if (rows == 0)
        rows = fills_gpu(v, R, TW != 0 ? compiled_blocks_per_sm : resident_per_sm(wide, shared) - 1)
                   ? R
                   : F;
      (rows == R ? wide : narrow)<<<grid_of(v, rows), dim3(dp4a_bx, dp4a_by), shared, stream>>>(
          v, out, shift);
    };
    if (out.sums()) launch(std::true_type{});
    else launch(std::false_type{});
  });
  CUDA_CHECK_LAUNCH();
  return ncc::path::own;
}

}  // namespace

NCC_STAGE("__dp4a with register blocking (beyond the book)", run);
