// SPDX-License-Identifier: BSD-3-Clause
// A plain parallel-for over the host's cores, for host references and checks of arrays with
// billions of elements (a single core would take minutes).
#pragma once

#include <algorithm>
#include <cstddef>
#include <thread>
#include <vector>

namespace course {

// body(begin, end, worker) over [0, n) in contiguous chunks, one per hardware thread.
template <class Body>
void parallel_for(std::size_t n, Body body) {
  unsigned workers = std::max(1u, std::thread::hardware_concurrency());
  if (n < (1u << 16) || workers == 1) {
    body(std::size_t{0}, n, 0u);
    return;
  }
  std::size_t chunk = (n + workers - 1) / workers;
  std::vector<std::thread> threads;
  for (unsigned w = 0; w < workers; ++w) {
    std::size_t begin = std::min(n, w * chunk), end = std::min(n, begin + chunk);
    if (begin < end) threads.emplace_back(body, begin, end, w);
  }
  for (auto &t : threads) t.join();
}

}  // namespace course
