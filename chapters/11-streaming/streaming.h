// SPDX-License-Identifier: BSD-3-Clause
// Chapter 11, streaming workloads: the entry points every stage implements, so one test file and
// one benchmark cover them all.
//
// Device-memory stages (01-03) compute out = alpha * x + y on arrays already in device memory.
// Host-memory stages (04-07) compute the same on arrays in host memory: getting the data to the
// GPU and back is the lesson.
#pragma once

#include "common/memory.h"
#include "common/stage.h"

#include <cuda_runtime.h>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace streaming {

struct launch_config {
  int threads = 256;  // per block
  int blocks = 0;     // 0: as many as the GPU holds at once (course::resident_blocks)
  int unroll = 4;     // elements (or vectors) per thread per iteration, for the stages that unroll
};

// out[i] = alpha * x[i] + y[i] for i in [0, n), device pointers, work enqueued on `stream`.
// out may equal x or y (in place, as cublasSaxpy updates y).
using device_saxpy_fn = void (*)(float *out, const float *x, const float *y, std::size_t n,
                                 float alpha, const launch_config &cfg, cudaStream_t stream);

struct device_stage {
  course::stage_info info;
  device_saxpy_fn saxpy;
  bool unrolls;  // whether launch_config::unroll means anything to it
};

// What the harness prepares once per size so that a timed call measures transfers and the kernel,
// not allocation: measurement plumbing only. The mapped stage uses none of the device buffers.
struct host_context {
  float *d_out = nullptr, *d_x = nullptr, *d_y = nullptr;  // device buffers of at least n floats
  cudaStream_t *streams = nullptr;                         // max_streams non-blocking streams
  int max_streams = 0;
  int n_streams = 1;  // how many the streams stage splits the work over
  // Stages that can split their time into phases record these four in the stream their work runs
  // in and set `phases`: start, host->device done, kernel done, device->host done.
  cudaEvent_t ev_start = nullptr, ev_h2d = nullptr, ev_kernel = nullptr, ev_d2h = nullptr;
  bool phases = false;
  launch_config launch;
};

// h_out = alpha * h_x + h_y, host pointers into arrays the stage's own host_alloc_fn allocated (at
// any float offset into them). On return h_out holds the result (the stage has synchronised).
using host_saxpy_fn = void (*)(float *h_out, const float *h_x, const float *h_y, std::size_t n,
                               float alpha, host_context &ctx);

// How a host stage gets its host arrays and gives them back: which kind of host memory the data
// lives in is part of what the stage teaches (pageable, pinned, mapped pinned). The tests and the
// benchmark allocate h_out, h_x and h_y through these, once per size (pinning is slow), fill them,
// call saxpy_streamed, and release them. count >= 1; host_release_fn takes what host_alloc_fn
// returned.
using host_alloc_fn = float *(*)(std::size_t count);
using host_release_fn = void (*)(float *p);

struct host_stage {
  course::stage_info info;
  host_saxpy_fn saxpy;
  host_alloc_fn alloc;
  host_release_fn release;
  course::host_memory memory;  // the kind alloc promises (the tests check it)
};

// The host-memory stages launch stage 01's kernel: streaming::launch_saxpy in the lesson header
// lesson_grid_stride.cuh, which they include.

// The lab (lab_pragma_unroll.cu, in the benchmark and in its test lab/11-streaming/pragma_unroll):
// stage 01's loop under `#pragma unroll cfg.unroll`, the book's first attempt at unrolling (11.1).
void launch_saxpy_pragma_unroll(float *out, const float *x, const float *y, std::size_t n,
                                float alpha, const launch_config &cfg, cudaStream_t stream);

// Calls f(std::integral_constant<int, u>{}) for a run-time unroll factor u in 1..16: the host-side
// switch that turns a command-line value into a template argument (12.3 does the same for block
// sizes).
template <class F>
void dispatch_unroll(int u, F &&f);

}  // namespace streaming

#define STREAMING_DEVICE_STAGE(fn, unrolls, title)                                               \
  static course::registrar<streaming::device_stage> COURSE_CONCAT(course_registrar_, __LINE__) { \
    streaming::device_stage { COURSE_THIS_STAGE(title), fn, unrolls }                            \
  }

#define STREAMING_HOST_STAGE(fn, alloc, release, memory, title)                                \
  static course::registrar<streaming::host_stage> COURSE_CONCAT(course_registrar_, __LINE__) { \
    streaming::host_stage { COURSE_THIS_STAGE(title), fn, alloc, release, memory }             \
  }

// --- implementation ---------------------------------------------------------------------------
#include <stdexcept>
#include <string>

namespace streaming {
namespace detail {
template <int U, class F>
void dispatch_unroll(int u, F &f) {
  if constexpr (U <= 16) {
    if (u == U) return f(std::integral_constant<int, U>{});
    dispatch_unroll<U + 1>(u, f);
  } else {
    throw std::invalid_argument("unroll factor " + std::to_string(u) + " is not in 1..16");
  }
}
}  // namespace detail

template <class F>
void dispatch_unroll(int u, F &&f) {
  detail::dispatch_unroll<1>(u, f);
}
}  // namespace streaming
