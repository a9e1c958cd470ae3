// SPDX-License-Identifier: BSD-3-Clause
// The host side of the chapter's checks, shared by the tests and the benchmark: sums over
// billions of generated elements on all cores, and the GPU's 32-bit wrap-around.
#pragma once

#include "common/parallel.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

namespace reduction {

// f(i) summed over [0, n) on all cores, in T.
template <class T, class F>
T host_sum(std::size_t n, F f) {
  std::vector<T> parts(std::max(1u, std::thread::hardware_concurrency()),
                       T(0));  // one per parallel_for worker
  course::parallel_for(n, [&](std::size_t b, std::size_t e, unsigned worker) {
    T sum = T(0);
    for (std::size_t i = b; i < e; ++i) sum += f(i);
    parts[worker] = sum;
  });
  T total = T(0);
  for (T p : parts) total += p;
  return total;
}

// An exact sum reduced mod 2^32, as the GPU's int additions give it in any order.
inline int wrap32(long long s) {
  return static_cast<int>(static_cast<std::uint32_t>(static_cast<unsigned long long>(s)));
}

}  // namespace reduction
