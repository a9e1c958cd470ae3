// SPDX-License-Identifier: BSD-3-Clause
// Measurement plumbing for the tests and the benchmark of the host-memory stages: owns what a
// streaming::host_context points to (device buffers, streams, events), and holds a stage's host
// arrays, allocated and released by the stage's own functions (the stage teaches which memory).
#pragma once

#include "streaming.h"

#include "common/memory.h"

#include <cstdio>
#include <exception>
#include <utility>
#include <vector>

namespace streaming {

// `count` floats from stage.alloc, given back through stage.release on destruction.
class stage_host_buffer {
 public:
  stage_host_buffer(const host_stage &stage, std::size_t count) : stage_(&stage), count_(count) {
    if (count_) ptr_ = stage.alloc(count_);
  }
  ~stage_host_buffer() {
    if (!ptr_) return;
    try {
      stage_->release(ptr_);
    } catch (const std::exception &e) {  // a destructor must not throw: report and go on
      std::fprintf(stderr, "stage %s: releasing its host array failed: %s\n",
                   stage_->info.id.c_str(), e.what());
    }
  }
  stage_host_buffer(const stage_host_buffer &) = delete;
  stage_host_buffer &operator=(const stage_host_buffer &) = delete;

  float *get() const { return ptr_; }
  float &operator[](std::size_t i) const { return ptr_[i]; }
  std::size_t size() const { return count_; }

 private:
  const host_stage *stage_;
  std::size_t count_;
  float *ptr_ = nullptr;
};

class owned_host_context {
 public:
  owned_host_context(std::size_t capacity, int max_streams, const launch_config &launch = {})
      : d_out_(capacity), d_x_(capacity), d_y_(capacity), streams_(max_streams) {
    for (auto &s : streams_) handles_.push_back(s);
    ctx_.d_out = d_out_.get();
    ctx_.d_x = d_x_.get();
    ctx_.d_y = d_y_.get();
    ctx_.streams = handles_.data();
    ctx_.max_streams = max_streams;
    ctx_.ev_start = ev_[0];
    ctx_.ev_h2d = ev_[1];
    ctx_.ev_kernel = ev_[2];
    ctx_.ev_d2h = ev_[3];
    ctx_.launch = launch;
  }
  host_context &get() { return ctx_; }

 private:
  course::device_buffer<float> d_out_, d_x_, d_y_;
  std::vector<course::stream> streams_;
  std::vector<cudaStream_t> handles_;
  course::event ev_[4];
  host_context ctx_;
};

}  // namespace streaming
