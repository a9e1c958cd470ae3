// SPDX-License-Identifier: BSD-3-Clause
// Stage 08 (beyond the book): __dp4a with register blocking.
//
// Your task: in stage 07 each image word a thread loads feeds four dp4a, and every output takes
// the window sums of each of its rows itself, though the outputs below it need the same rows. Let
// each thread compute R rows of stage 07's outputs at once: load every image row once, feed each
// word to every output whose window holds it, and take a row's window sums once for all the
// outputs that use them (the rows all R outputs hold, once in all). And at the compiled-in sizes
// (widths that are multiples of 4; this kernel runs only at those, TW and TH never 0) each row of
// stage 07's shifted template has tw/4 + 1 words for the window's tw/4: a window's words can be
// cut from the image instead, to meet the template's own words (shift 0's copy of stage 07's
// template, rows of tw/4 + 1 words, the last one 0). You write the loop over the rows; the rest
// is stage 07's. Then the same
// for template sizes known only at run time (the generic kernel's region): there nothing unrolls,
// so take the template words from shared memory (one 16-byte load gives a row its four shifts),
// each row's window sums over all its words less the bytes outside each shift's window, and test
// which outputs a row feeds only in the first and last R - 1 rows.
// Watch for: which template row an image row meets for each of the R outputs, which way a shift
// moves the bytes of a little-endian word, and rows past the image's last one (no written output
// uses them, but memcheck sees them read); in the SASS, the IDP.4A per LDG and the registers per
// thread against stage 07's (make sass-diff A=15-ncc/07_dp4a
// B=exercise/15-ncc/08_register_blocked). In the generic kernel: the bytes before byte a of word 0
// and past byte a + tw of the last two words (4 nw - tw - a <= 6), nw = 1 or 2.
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
  COURSE_TODO();
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
  COURSE_TODO();
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
