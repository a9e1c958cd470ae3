// SPDX-License-Identifier: BSD-3-Clause
// Host-only tests of the chapter's host side (no GPU needed): which block sizes each kind of
// stage accepts, and the reference arithmetic the GPU tests and the benchmark compare against.
#include "host_reference.h"
#include "reduction.h"

#include "common/random.h"
#include "harness/catch.h"

#include <climits>
#include <vector>

TEST_CASE("block sizes each kind of stage accepts", "[host]") {
  auto accepted = [](reduction::block_sizes kind, int min_threads) {
    reduction::stage s{{}, nullptr, kind, min_threads};
    std::vector<int> out;
    for (int t = -1; t <= 2048; ++t)
      if (reduction::supports(s, t)) out.push_back(t);
    return out;
  };
  CHECK(accepted(reduction::block_sizes::powers_of_two, 1) ==
        std::vector<int>{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024});
  CHECK(accepted(reduction::block_sizes::powers_of_two, 32) ==
        std::vector<int>{32, 64, 128, 256, 512, 1024});
  const auto m32 = accepted(reduction::block_sizes::multiples_of_32, 32);
  CHECK(m32.size() == 32);
  CHECK(m32.front() == 32);
  CHECK(m32.back() == 1024);
  const auto any = accepted(reduction::block_sizes::any, 1);
  CHECK(any.size() == 1024);
  CHECK(any.front() == 1);
  CHECK(any.back() == 1024);
}

TEST_CASE("the reference wraps mod 2^32 as the GPU's int additions do", "[host]") {
  CHECK(reduction::wrap32(0) == 0);
  CHECK(reduction::wrap32(-5) == -5);
  CHECK(reduction::wrap32(static_cast<long long>(INT_MAX) + 1) == INT_MIN);
  CHECK(reduction::wrap32(static_cast<long long>(INT_MIN) - 1) == INT_MAX);
  CHECK(reduction::wrap32(3LL * (1LL << 32) + 7) == 7);
}

TEST_CASE("the parallel host sum equals a serial one", "[host]") {
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(65535), std::size_t(1000003)}) {
    long long serial = 0;
    for (std::size_t i = 0; i < n; ++i) serial += course::random_int(7, i, -1000, 1000);
    const long long parallel = reduction::host_sum<long long>(
        n, [](std::size_t i) { return course::random_int(7, i, -1000, 1000); });
    INFO("n=" << n);
    CHECK(parallel == serial);
  }
}
