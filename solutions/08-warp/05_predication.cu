// SPDX-License-Identifier: BSD-3-Clause
// Stage 05: predication and divergence. After The CUDA Handbook 8.4 (conditional code: predication,
// divergence and convergence, the special cases min, max and abs).
//
// Small element-wise kernels, each one shape of conditional code, to read in SASS: short ones the
// compiler predicates or selects (SEL), long ones it branches, branch_of<N> to find where between,
// and clamps written with ifs. The exercise: the branch-free form of each, bit for bit the same.
// Since the book (8.4.2: SSY and .S), Volta replaced the reconvergence stack with convergence
// barriers (BSSY, BSYNC).
// What to look for (`make sass STAGE=08-warp/05_predication`; counts in notes.md): guarded
// instructions in the short kernels; BSSY, BRA and BSYNC in long_if_else and data_loop as written
// and none in their branch-free forms; the N where branch_of first branches; VIMNMX, IABS, FMNMX.
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
    const int neg = v >> 31;  // all ones where v < 0 (an arithmetic shift), else 0
    r = v + (neg & (2 * v + 7));
    // EXERCISE END
    return r;
  }
};

struct if_else {
  __device__ static int apply(int v) {
    int r = v;
    // EXERCISE BEGIN: if_else (the Collatz step) with no branch, bit for bit.
    const int odd = -(v & 1);
    r = (odd & (3 * v + 1)) | (~odd & (v / 2));
    // EXERCISE END
    return r;
  }
};

struct ternary {
  __device__ static int apply(int v) {
    int r = v;
    // EXERCISE BEGIN: ternary with no branch, bit for bit; then diff its SASS against the ?: form.
    const int pos = -int(v > 0);
    r = (pos & (5 * v)) | (~pos & (-v / 3));
    // EXERCISE END
    return r;
  }
};

struct long_if_else {
  __device__ static int apply(int v) {
    int r = v;
    // EXERCISE BEGIN: long_if_else with no branch, bit for bit.
    unsigned a = static_cast<unsigned>(v), b = a;
#pragma unroll
    for (unsigned k = 0; k < 12; ++k) {
      a = a * a + k;
      b = (b ^ (b >> 5)) * 3u + k;
    }
    const unsigned odd = 0u - (static_cast<unsigned>(v) & 1u);
    r = static_cast<int>((odd & a) | (~odd & b));
    // EXERCISE END
    return r;
  }
};

struct data_loop {
  __device__ static int apply(int v) {
    int r = v;
    // EXERCISE BEGIN: data_loop with no branch that depends on v, bit for bit.
    unsigned u = static_cast<unsigned>(v);
    const int trips = v & 15;
#pragma unroll
    for (int k = 0; k < 15; ++k) {
      const unsigned next = u * 2654435761u + k;
      u = k < trips ? next : u;
    }
    r = static_cast<int>(u);
    // EXERCISE END
    return r;
  }
};

struct min_max_abs {
  __device__ static int apply(int v) {
    int r = v;
    // EXERCISE BEGIN: min_max_abs with no branch, bit for bit.
    r = min(max(v, -1000), 1000) + abs(v);
    // EXERCISE END
    return r;
  }
};

struct clamp_abs {
  __device__ static float apply(float x) {
    float r = x;
    // EXERCISE BEGIN: clamp_abs with no branch, bit for bit, a NaN included.
    const float c = fabsf(x) - 1.0f;
    r = fminf(fmaxf(c, -0.5f), 0.5f);
    r = c != c ? c : r;
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
