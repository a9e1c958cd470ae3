// SPDX-License-Identifier: BSD-3-Clause
// Owns what a streaming::host_context points to (device buffers, streams, events), for the tests
// and the benchmark of the host-memory stages.
#pragma once

#include "streaming.h"

#include "common/memory.h"

#include <vector>

namespace streaming {

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
