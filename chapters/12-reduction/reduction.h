// SPDX-License-Identifier: BSD-3-Clause
// Chapter 12, reduction: the entry points every stage implements, so one test file and one
// benchmark cover them all, and the workspace the multi-block stages keep their partial results in.
//
// Every stage sums n ints: *d_answer = in[0] + ... + in[n-1], computed in 32-bit two's-complement
// arithmetic (so the result is the true sum mod 2^32, whatever order the GPU adds in). The sum
// of zero elements is 0. Stage 07 adds entry points for other types and operators, stage 08
// counts instead of summing.
#pragma once

#include "common/check.h"
#include "common/memory.h"
#include "common/stage.h"

#include <cuda_runtime.h>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace reduction {

struct config {
  int threads = 256;  // per block
  int blocks =
      0;  // 0: as many as the GPU holds at once, and no more than there are threads' worth of input
};

// Device memory a reduction needs besides its input and answer: one partial result per block and
// the retirement counter of the single-pass stages. The caller owns it and may reuse it for any
// number of calls in one stream; calls that may run at the same time (different streams) need a
// workspace each, since they would otherwise share the partials and the counter.
class workspace {
 public:
  workspace() : counter_(1) {
    // The counter must be zero before the first single-pass kernel; after that the kernel's last
    // block puts it back. Synchronise so that work in a non-blocking stream sees the zero.
    CUDA_CHECK(cudaMemset(counter_.get(), 0, sizeof(unsigned)));
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  // Room for `count` partial results of type T (grows, never shrinks; cudaFree waits for the
  // device, so an earlier call still reading the old buffer finishes first).
  template <class T>
  T *partials(std::size_t count) {
    const std::size_t bytes = count * sizeof(T);
    if (bytes > partials_.size()) partials_ = course::device_buffer<unsigned char>(bytes);
    return reinterpret_cast<T *>(partials_.get());  // cudaMalloc aligns to 256 bytes
  }
  unsigned *counter() const { return counter_.get(); }

 private:
  course::device_buffer<unsigned char> partials_;
  course::device_buffer<unsigned> counter_;
};

// *d_answer = the sum of d_in[0, n), device pointers, work enqueued on `stream`.
using reduce_fn = void (*)(int *d_answer, const int *d_in, std::size_t n, const config &cfg,
                           workspace &ws, cudaStream_t stream);

// Which block sizes a stage runs with; anything else is refused with std::invalid_argument.
enum class block_sizes {
  powers_of_two,    // 1, 2, 4, ..., 1024 (a stage may require at least 32)
  multiples_of_32,  // 32, 64, 96, ..., 1024
  any               // 1..1024
};

// --- stage 07: other types and operators (12.6) ----------------------------------------------
struct moments {  // sum and sum of squares, enough for a mean and a variance
  double sum, sum_squares;
};
struct int_range {
  int min, max;
};
struct typed_entry_points {
  void (*sum_ll)(long long *d_answer, const int *d_in, std::size_t n, const config &, workspace &,
                 cudaStream_t);
  void (*sum_double)(double *d_answer, const float *d_in, std::size_t n, const config &,
                     workspace &, cudaStream_t);
  void (*sum_squares)(moments *d_answer, const float *d_in, std::size_t n, const config &,
                      workspace &, cudaStream_t);
  void (*min_max)(int_range *d_answer, const int *d_in, std::size_t n, const config &, workspace &,
                  cudaStream_t);
};

// --- stage 08: counting the elements that meet a predicate (12.7) ------------------------------
// *d_count = the number of i in [0, n) with d_in[i] > threshold. use_syncthreads_count picks the
// block-wide vote (__syncthreads_count) over the warp vote (__ballot_sync + __popc).
using count_fn = void (*)(unsigned long long *d_count, const int *d_in, std::size_t n,
                          int threshold, bool use_syncthreads_count, const config &cfg,
                          workspace &ws, cudaStream_t stream);

struct stage {
  course::stage_info info;
  reduce_fn reduce;  // null for stage 08, which counts instead
  block_sizes sizes;
  int min_threads;                            // the smallest block size the stage accepts
  const typed_entry_points *typed = nullptr;  // stage 07 only
  count_fn count = nullptr;                   // stage 08 only
};

// Whether a stage accepts `threads` per block.
inline bool supports(const stage &s, int threads) {
  if (threads < s.min_threads || threads > 1024) return false;
  switch (s.sizes) {
    case block_sizes::powers_of_two: return (threads & (threads - 1)) == 0;
    case block_sizes::multiples_of_32: return threads % 32 == 0;
    case block_sizes::any: return true;
  }
  return false;
}

}  // namespace reduction

// REDUCTION_STAGE("title (12.2)", reduce, sizes, min_threads);  registers the stage compiled in
// this file; its id is the build's COURSE_STAGE_ID.
#define REDUCTION_STAGE(title, ...)                                                       \
  static course::registrar<reduction::stage> COURSE_CONCAT(course_registrar_, __LINE__) { \
    reduction::stage { COURSE_THIS_STAGE(title), __VA_ARGS__ }                            \
  }
