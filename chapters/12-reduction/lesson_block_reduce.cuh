// SPDX-License-Identifier: BSD-3-Clause
// Lesson header, taught by stage 03 (03_templated.cu): the block size as a template parameter. The
// CUDA Handbook 12.2, listings 12.3 and 12.4; 12.3 (listing 12.5) takes the same fold out into a
// device function, as block_reduce<B> is here, so the single-pass kernel can call it twice.
//
// Your task, in two regions: the host switch that turns a run-time block size into a template
// argument, and the block fold for a compile-time block size B and any operator (stage 02's fold,
// with every test on B decided by the compiler). Stages 04, 05 and 07 use both as you write them,
// 09 and 10 the switch, and report TODO until they are filled in.
#pragma once

#include "reduction_common.cuh"

#include <stdexcept>
#include <string>
#include <type_traits>

namespace reduction {

// Calls f(std::integral_constant<unsigned, B>{}) for the power of two B == threads, 1..1024: the
// host-side switch of 12.2 (listing 12.4) that lets one run-time value pick a kernel compiled for
// it.
template <unsigned B = 1, class F>
void dispatch_block_size(int threads, F &&f) {
  // EXERCISE BEGIN: call f with std::integral_constant<unsigned, B>{} for the power of two B in
  // 1..1024 that equals threads; any other size throws std::invalid_argument.
  COURSE_TODO();
  // EXERCISE END
}

struct plus {
  template <class T>
  __host__ __device__ T operator()(T a, T b) const {
    return a + b;
  }
};

// The block reduction of 12.2 (listing 12.3), for a block of B threads (a power of two, 1..1024, a
// template parameter so every loop below unrolls and every test on B is decided at compile time).
// Each thread brings `value`; thread 0 returns the block's result (other threads return partial
// results). Uses partials[0, B) and leaves it in use: a second call needs a __syncthreads()
// between.
//
// The last 64 values are folded by warp 0 alone, with __syncwarp() instead of __syncthreads().
// In each step only the lanes i < offset write (slot i), and they read slots i + offset, which no
// lane writes in that step because the lanes at or above offset write nothing; the __syncwarp()
// after the step makes the writes visible to the lanes that read them in the next step. Without it
// (the book's volatile form) lanes of a warp are not guaranteed to move in lock-step on Volta and
// later, so a read may see a slot before its step wrote it.
template <unsigned B, class T, class Op>
__device__ T block_reduce(T *partials, T value, Op op) {
  static_assert(B >= 1 && B <= 1024 && (B & (B - 1)) == 0, "B must be a power of two in 1..1024");
  // EXERCISE BEGIN: stage 02's fold for a block of exactly B threads and any operator: thread 0
  // returns op's combination of every thread's value.
  COURSE_TODO();
  // EXERCISE END
}

}  // namespace reduction
