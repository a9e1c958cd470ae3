// SPDX-License-Identifier: BSD-3-Clause
// Stage 05: predication and divergence. After The CUDA Handbook 8.4 (conditional code:
// predication, divergence and convergence, the special cases min, max and abs).
//
// Small element-wise kernels, each one shape of conditional code, to read in SASS:
//   short_if, if_else, ternary   a few instructions under a condition: the compiler predicates
//                                them (@P0 / @!P0 in front of an instruction turns it off for the
//                                lanes whose predicate says so) or computes both sides and picks
//                                one with SEL; no branch, so no divergence.
//   long_if_else, data_loop      too much code to execute for every lane: a real branch. The
//                                lanes of a warp that disagree run the two paths one after the
//                                other, and meet again where the paths join.
//   branch_of<N>                 one if with N dependent multiply-adds: where between N = 1 and
//                                32 the compiler stops predicating and starts branching (the book
//                                quotes up to 7 instructions for the compilers of its day).
//   min_max_abs, clamp_abs       conditions the hardware does in one instruction: VIMNMX and FMNMX
//                                for min and max, IABS, and the |x| operand modifier of float
//                                instructions.
//
// What changed since the book: SM 3.x bracketed divergent code with SSY (push the reconvergence
// point on a per-warp stack) and a .S suffix (pop it). Volta replaced the stack with convergence
// barriers, because independent thread scheduling lets diverged lanes interleave: BSSY B0, label
// saves the lanes that must meet at label in barrier register B0, and BSYNC B0 there waits for
// them. A WARPSYNC, as for __syncwarp, is the explicit form of the same thing.
//
// What to look for (`make sass STAGE=08-warp/05_predication`, one kernel with
// `python3 harness/sass.py dump 08-warp/05_predication --kernel short_if`, and the counts table
// of the chapter README): guarded instructions in the short kernels (a SEL in branch_of<1>); BSSY,
// BRA and BSYNC in long_if_else and data_loop; VIMNMX, IABS, FMNMX and a |R| operand in
// the last two; and the N at which branch_of first shows a BRA.
#include "warp_launch.cuh"

#include <stdexcept>
#include <string>

namespace {

// out[i] = F::apply(in[i]) in a grid-stride loop, kept rolled so that each kernel's SASS holds its
// conditional code once.
template <class F, class T>
__global__ void map_kernel(T *out, const T *in, std::size_t n) {
#pragma unroll 1
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(blockDim.x) * gridDim.x)
    out[i] = F::apply(in[i]);
}

struct short_if {
  __device__ static int apply(int v) {
    if (v < 0) v = 3 * v + 7;
    return v;
  }
};

struct if_else {
  __device__ static int apply(int v) {
    if (v & 1) v = 3 * v + 1;
    else v = v / 2;
    return v;
  }
};

struct ternary {
  __device__ static int apply(int v) { return v > 0 ? 5 * v : -v / 3; }
};

// Unsigned arithmetic: the rounds wrap around instead of overflowing.
struct long_if_else {
  __device__ static int apply(int v) {
    unsigned u = v;
    if (v & 1) {
#pragma unroll
      for (unsigned k = 0; k < 12; ++k) u = u * u + k;
    } else {
#pragma unroll
      for (unsigned k = 0; k < 12; ++k) u = (u ^ (u >> 5)) * 3u + k;
    }
    return static_cast<int>(u);
  }
};

struct data_loop {
  __device__ static int apply(int v) {
    unsigned u = v;
    const int trips = v & 15;
    for (int k = 0; k < trips; ++k) u = u * 2654435761u + k;
    return static_cast<int>(u);
  }
};

template <int N>
struct branch_of {
  __device__ static int apply(int v) {
    unsigned u = v;
    if (v & 1) {
#pragma unroll
      for (unsigned k = 0; k < unsigned(N); ++k) u = u * u + k;
    }
    return static_cast<int>(u);
  }
};

struct min_max_abs {
  __device__ static int apply(int v) {
    int r = v;
    // EXERCISE BEGIN: r = v clamped to [-1000, 1000], plus |v|, with no branch: min, max and abs.
    r = min(max(v, -1000), 1000) + abs(v);
    // EXERCISE END
    return r;
  }
};

struct clamp_abs {
  __device__ static float apply(float x) {
    float r = x;
    // EXERCISE BEGIN: r = x clamped to [-0.5, 0.5], plus |x|, with no branch: fminf, fmaxf, fabsf.
    r = fminf(fmaxf(x, -0.5f), 0.5f) + fabsf(x);
    // EXERCISE END
    return r;
  }
};

void run(warp::branchy kernel, int *out, const int *in, std::size_t n) {
  using warp::branchy;
  switch (kernel) {
    case branchy::short_if: return warp::launch_elementwise(map_kernel<short_if, int>, n, out, in, n);
    case branchy::if_else: return warp::launch_elementwise(map_kernel<if_else, int>, n, out, in, n);
    case branchy::ternary: return warp::launch_elementwise(map_kernel<ternary, int>, n, out, in, n);
    case branchy::long_if_else: return warp::launch_elementwise(map_kernel<long_if_else, int>, n, out, in, n);
    case branchy::data_loop: return warp::launch_elementwise(map_kernel<data_loop, int>, n, out, in, n);
    case branchy::min_max_abs: return warp::launch_elementwise(map_kernel<min_max_abs, int>, n, out, in, n);
  }
  throw std::invalid_argument("no such branchy kernel: " + std::to_string(static_cast<int>(kernel)));
}

// The run-time length picks one of the compiled branch_of<N>.
template <int... N>
void run_branch_of(int length, int *out, const int *in, std::size_t n, std::integer_sequence<int, N...>) {
  const bool compiled =
      ((length == N && (warp::launch_elementwise(map_kernel<branch_of<N>, int>, n, out, in, n), true)) || ...);
  if (!compiled) throw std::invalid_argument("no branch_of kernel of length " + std::to_string(length));
}

void branch_length(int length, int *out, const int *in, std::size_t n) {
  run_branch_of(length, out, in, n, warp::branch_lengths{});
}

void clamp_abs_floats(float *out, const float *in, std::size_t n) {
  warp::launch_elementwise(map_kernel<clamp_abs, float>, n, out, in, n);
}

}  // namespace

WARP_STAGE(predication_stage, "predication, divergence, min/max/abs (8.4)", run, branch_length, clamp_abs_floats);
