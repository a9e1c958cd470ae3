// SPDX-License-Identifier: BSD-3-Clause
// Wall-clock timing on the host. Device work is timed with events (memory.h's event and
// elapsed_ms); a host timer is right only around code that ends synchronised with the device.
#pragma once

#include <chrono>

namespace course {

class host_timer {
 public:
  host_timer() : start_(clock::now()) {}
  void restart() { start_ = clock::now(); }
  double elapsed_ms() const {
    return std::chrono::duration<double, std::milli>(clock::now() - start_).count();
  }

 private:
  using clock = std::chrono::steady_clock;
  clock::time_point start_;
};

}  // namespace course
