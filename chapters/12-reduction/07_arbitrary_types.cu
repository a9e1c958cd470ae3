// SPDX-License-Identifier: BSD-3-Clause
// Stage 07: any input type, any reduction type, any associative operator. The CUDA Handbook 12.6,
// listings 12.9 and 12.10.
//
// Your task, in four regions: three operator classes and a kernel written only in their terms. A
// reduction is a type, an identity, a way to turn one input element into that type, and an
// associative combination; stage 03's kernel and your block_reduce then serve every one of them.
// The entry points: the chapter's int sum, and for this stage's tests int -> long long, float ->
// double, float -> (sum, sum of squares) in double, and int -> (min, max). Compare with stage 03.
// Watch for: the type each addition and multiplication runs in (an int sum that overflows, a square
// rounded to float), and the identity that a thread with no elements brings (min and max, blocks
// with more threads than elements).
// Check: `make check STAGE=exercise/12-reduction/07_arbitrary_types`, then
// `make sass STAGE=exercise/12-reduction/07_arbitrary_types`: where is the float widened?
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
  COURSE_TODO();
  // EXERCISE END
};

struct moments_op {
  using type = reduction::moments;
  // EXERCISE BEGIN: the sum and the sum of squares of floats, both in double.
  COURSE_TODO();
  // EXERCISE END
};

struct min_max_op {
  using type = reduction::int_range;
  // EXERCISE BEGIN: the smallest and the largest int, in one pass.
  COURSE_TODO();
  // EXERCISE END
};

// out[blockIdx.x] = Op's reduction of this block's share of in[0, n), for blocks of B threads.
template <class Op, unsigned B, class In>
__global__ void reduce_kernel(typename Op::type *out, const In *in, std::size_t n) {
  using T = typename Op::type;
  __shared__ T partials[B];
  // EXERCISE BEGIN: stage 03's kernel for any Op, written only in terms of Op's members (write the
  // operator classes above first).
  COURSE_TODO();
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
