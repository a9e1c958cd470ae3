// SPDX-License-Identifier: BSD-3-Clause
// Stage 07: any input type, any reduction type, any associative operator. The CUDA Handbook 12.6,
// listings 12.9 and 12.10.
//
// Changes from stage 03 (compare with that stage): the kernel is a template on an operator class Op
// as well as on B. Op names the reduction type, its identity, how an input becomes that type
// (Op::lift) and how two values combine; the same driver and your block_reduce<B> serve int -> long
// long, float -> double, float -> (sum, sum of squares) and int -> (min, max).
// What to look for: `make sass STAGE=12-reduction/07_arbitrary_types`: F2F.F64.F32 and DADD in the
// float -> double loop and LDS.64/STS.64 in its fold; the wider type costs registers and FP64 adds,
// not loads. The benchmark times the int sum, as fast as stage 03.
#include "lesson_block_reduce.cuh"

#include <climits>

namespace {

constexpr auto sizes = reduction::block_sizes::powers_of_two;
constexpr int min_threads = 1;

// The operator classes: what a reduction is, apart from how the GPU runs it. Each names its
// reduction type (type, given) and defines, as __device__ members: identity(), the value that
// changes nothing when combined in (what a thread with no elements brings); lift(x), which turns
// one input element into a value of type (and lift(type) for the second pass, whose inputs are
// already of that type: sum_op's template lift serves both); and operator()(a, b), the
// combination, which must be associative (the GPU groups the elements as it pleases).
template <class T>
struct sum_op {
  using type = T;
  // EXERCISE BEGIN: a sum in type T of inputs of any arithmetic type.
  __device__ static T identity() { return T(0); }
  template <class In>
  __device__ static T lift(In x) {
    return T(x);
  }
  __device__ T operator()(T a, T b) const { return a + b; }
  // EXERCISE END
};

struct moments_op {
  using type = reduction::moments;
  // EXERCISE BEGIN: the sum and the sum of squares of floats, both in double.
  __device__ static type identity() { return {0.0, 0.0}; }
  __device__ static type lift(float x) { return {double(x), double(x) * double(x)}; }
  __device__ static type lift(type m) { return m; }
  __device__ type operator()(type a, type b) const {
    return {a.sum + b.sum, a.sum_squares + b.sum_squares};
  }
  // EXERCISE END
};

struct min_max_op {
  using type = reduction::int_range;
  // EXERCISE BEGIN: the smallest and the largest int, in one pass.
  __device__ static type identity() { return {INT_MAX, INT_MIN}; }
  __device__ static type lift(int x) { return {x, x}; }
  __device__ static type lift(type r) { return r; }
  __device__ type operator()(type a, type b) const {
    return {min(a.min, b.min), max(a.max, b.max)};
  }
  // EXERCISE END
};

// out[blockIdx.x] = Op's reduction of this block's share of in[0, n), for blocks of B threads.
template <class Op, unsigned B, class In>
__global__ void reduce_kernel(typename Op::type *out, const In *in, std::size_t n) {
  using T = typename Op::type;
  __shared__ T partials[B];
  // EXERCISE BEGIN: stage 03's kernel for any Op, written only in terms of Op's members (write the
  // operator classes above first).
  const Op op;
  T value = Op::identity();
  for (std::size_t i = blockIdx.x * std::size_t(B) + threadIdx.x; i < n;
       i += std::size_t(B) * gridDim.x)
    value = op(value, Op::lift(in[i]));
  value = reduction::block_reduce<B>(partials, value, op);
  if (threadIdx.x == 0) out[blockIdx.x] = value;
  // EXERCISE END
}

// *d_answer = Op's reduction of d_in[0, n): pass 1 reads In, pass 2 reads the partials of Op::type.
template <class Op, class In>
void reduce_typed(typename Op::type *d_answer, const In *d_in, std::size_t n,
                  const reduction::config &cfg, reduction::workspace &ws, cudaStream_t stream) {
  reduction::require_block_size(cfg.threads, sizes, min_threads);
  reduction::dispatch_block_size(cfg.threads, [&](auto b) {
    constexpr unsigned B = decltype(b)::value;
    reduction::two_pass(reduce_kernel<Op, B, In>, reduce_kernel<Op, B, typename Op::type>, d_answer,
                        d_in, n, cfg, ws, stream);
  });
}

const reduction::typed_entry_points typed = {
    reduce_typed<sum_op<long long>, int>,
    reduce_typed<sum_op<double>, float>,
    reduce_typed<moments_op, float>,
    reduce_typed<min_max_op, int>,
};

}  // namespace

REDUCTION_STAGE("any input and reduction type (12.6)", reduce_typed<sum_op<int>, int>, sizes,
                min_threads, &typed);
