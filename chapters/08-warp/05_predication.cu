// SPDX-License-Identifier: BSD-3-Clause
// Stage 05: predication and divergence. After The CUDA Handbook 8.4 (conditional code:
// predication, divergence and convergence, the special cases min, max and abs).
//
// Small element-wise kernels, each one shape of conditional code, given as written (if, else, ?:)
// to read in SASS: short_if, if_else and ternary (a few instructions under a condition);
// long_if_else and data_loop (more work under the condition, and a trip count per lane);
// branch_of<N> (an if around N dependent multiply-adds, N = 1..32); min_max_abs and clamp_abs
// (clamps and absolute values written with ifs).
//
// The task: the branch-free form of each (namespace branch_free), with the same results bit for
// bit for every input the tests draw: no if around the work, only arithmetic, masks, selects of
// values (short_if asks for masks alone), min, max and abs. Watch the edges: 0, negative odd
// numbers, the ends of the ranges the tests draw (the signed kernels get |v| <= 4e8, where no
// product overflows int; long_if_else's rounds are unsigned and wrap), and NaN for the float one
// (what do the hardware's float min and max do with it?).
//
// Look for (`make sass STAGE=exercise/08-warp/05_predication`, one kernel with
// `python3 harness/sass.py dump exercise/08-warp/05_predication --kernel short_if`): which kernels
// as written does the compiler predicate (@P0 guards, SEL) and which does it branch around (BSSY,
// BRA, BSYNC)? At which N does branch_of<N> first branch (the book: up to 7 instructions for the
// compilers of its day)? Your branch-free forms may have no BSSY and no branch but the grid-stride
// loop's; count their instructions against the branching forms.
#include "warp_launch.cuh"

#include <stdexcept>
#include <string>

namespace {

// out[i] = F::apply(in[i]) in a grid-stride loop, kept rolled so that each kernel's SASS holds its
// conditional code once.
template <class F, class T>
__global__ void map_kernel(T *out, const T *in, std::size_t n) {
#pragma unroll 1
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(blockDim.x) * gridDim.x)
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
    int c = v;
    if (c < -1000) c = -1000;
    if (c > 1000) c = 1000;
    int a = v;
    if (a < 0) a = -a;
    return c + a;
  }
};

struct clamp_abs {
  __device__ static float apply(float x) {
    float c = fabsf(x) - 1.0f;
    if (c < -0.5f) c = -0.5f;
    else if (c > 0.5f) c = 0.5f;
    return c;
  }
};

// The same functions with no branch: the tests hold them to the results above, bit for bit.
namespace branch_free {

struct short_if {
  __device__ static int apply(int v) {
    int r = v;
    // EXERCISE BEGIN: short_if as written, with no if and no ?:, bit for bit.
    COURSE_TODO();
    // EXERCISE END
    return r;
  }
};

struct if_else {
  __device__ static int apply(int v) {
    int r = v;
    // EXERCISE BEGIN: if_else (the Collatz step) with no branch, bit for bit.
    COURSE_TODO();
    // EXERCISE END
    return r;
  }
};

struct ternary {
  __device__ static int apply(int v) {
    int r = v;
    // EXERCISE BEGIN: ternary with no branch, bit for bit; then diff its SASS against the ?: form.
    COURSE_TODO();
    // EXERCISE END
    return r;
  }
};

struct long_if_else {
  __device__ static int apply(int v) {
    int r = v;
    // EXERCISE BEGIN: long_if_else with no branch, bit for bit.
    COURSE_TODO();
    // EXERCISE END
    return r;
  }
};

struct data_loop {
  __device__ static int apply(int v) {
    int r = v;
    // EXERCISE BEGIN: data_loop with no branch that depends on v, bit for bit.
    COURSE_TODO();
    // EXERCISE END
    return r;
  }
};

struct min_max_abs {
  __device__ static int apply(int v) {
    int r = v;
    // EXERCISE BEGIN: min_max_abs with no branch, bit for bit.
    COURSE_TODO();
    // EXERCISE END
    return r;
  }
};

struct clamp_abs {
  __device__ static float apply(float x) {
    float r = x;
    // EXERCISE BEGIN: clamp_abs with no branch, bit for bit, a NaN included.
    COURSE_TODO();
    // EXERCISE END
    return r;
  }
};

}  // namespace branch_free

template <class AsWritten, class BranchFree>
void run_form(warp::form f, int *out, const int *in, std::size_t n) {
  if (f == warp::form::as_written)
    warp::launch_elementwise(map_kernel<AsWritten, int>, n, out, in, n);
  else warp::launch_elementwise(map_kernel<BranchFree, int>, n, out, in, n);
}

void run(warp::branchy kernel, warp::form f, int *out, const int *in, std::size_t n) {
  using warp::branchy;
  switch (kernel) {
    case branchy::short_if: return run_form<short_if, branch_free::short_if>(f, out, in, n);
    case branchy::if_else: return run_form<if_else, branch_free::if_else>(f, out, in, n);
    case branchy::ternary: return run_form<ternary, branch_free::ternary>(f, out, in, n);
    case branchy::long_if_else:
      return run_form<long_if_else, branch_free::long_if_else>(f, out, in, n);
    case branchy::data_loop: return run_form<data_loop, branch_free::data_loop>(f, out, in, n);
    case branchy::min_max_abs:
      return run_form<min_max_abs, branch_free::min_max_abs>(f, out, in, n);
  }
  throw std::invalid_argument("no such branchy kernel: " +
                              std::to_string(static_cast<int>(kernel)));
}

// The run-time length picks one of the compiled branch_of<N>.
template <int... N>
void run_branch_of(int length, int *out, const int *in, std::size_t n,
                   std::integer_sequence<int, N...>) {
  const bool compiled =
      ((length == N &&
        (warp::launch_elementwise(map_kernel<branch_of<N>, int>, n, out, in, n), true)) ||
       ...);
  if (!compiled)
    throw std::invalid_argument("no branch_of kernel of length " + std::to_string(length));
}

void branch_length(int length, int *out, const int *in, std::size_t n) {
  run_branch_of(length, out, in, n, warp::branch_lengths{});
}

void clamp_abs_floats(warp::form f, float *out, const float *in, std::size_t n) {
  if (f == warp::form::as_written)
    warp::launch_elementwise(map_kernel<clamp_abs, float>, n, out, in, n);
  else warp::launch_elementwise(map_kernel<branch_free::clamp_abs, float>, n, out, in, n);
}

}  // namespace

WARP_STAGE(predication_stage, "predication, divergence, branch-free forms (8.4)", run,
           branch_length, clamp_abs_floats);
