// SPDX-License-Identifier: BSD-3-Clause
// Tests of the predicated-load lab (lab_predicated_load.cu): the warp sums against the host for
// every count of active lanes, at sizes with a partial last warp and block; and a load that is
// predicated off reads no memory at all, so a null input with every lane off runs clean (memcheck
// included: make sanitize runs this program too).
#include "lab_predicated_load.h"

#include "common/memory.h"
#include "common/random_fill.h"
#include "harness/catch.h"
#include "harness/test_support.h"

#include <cstdint>
#include <string>
#include <vector>

namespace {

std::vector<int> host_sums(const std::vector<int> &in, int lanes_on) {
  std::vector<int> sums((in.size() + 31) / 32, 0);
  for (std::size_t i = 0; i < in.size(); ++i)
    if (int(i % 32) < lanes_on)
      sums[i / 32] = static_cast<int>(static_cast<std::uint32_t>(sums[i / 32]) + static_cast<std::uint32_t>(in[i]));
  return sums;
}

void check_sums(std::size_t n, int lanes_on) {
  const std::size_t warps = (n + 31) / 32;
  course::device_buffer<int> in(n ? n : 1), sums(warps + course::test::guard_elements);
  course::fill_random_device(in.get(), n, course::fresh_seed(), -1000000, 1000000);
  course::test::poison_device(sums.get(), warps + course::test::guard_elements);
  warp::lab_predicated_sums(sums.get(), in.get(), n, lanes_on);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto want = host_sums(course::test::copy_to_host(in.get(), n), lanes_on);
  const auto got = course::test::copy_to_host(sums.get(), warps + course::test::guard_elements);
  const auto r = course::test::check_elements(warps, [&](std::size_t w) { return got[w]; },
                                              [&](std::size_t w) { return want[w]; },
                                              [](std::size_t, int g, double w) { return double(g) == w; });
  INFO(course::test::describe("lab_predicated_load", "warp sums, " + std::to_string(lanes_on) + " lanes on", n, r));
  CHECK(r.ok());
  CHECK(course::test::first_written(got, warps) == got.size());
}

}  // namespace

TEST_CASE("warp sums of the first lanes_on lanes match the host", "[lab]") {
  for (std::size_t n : {std::size_t(1), std::size_t(31), std::size_t(33), std::size_t(257), std::size_t(1000003)})
    for (int lanes_on : {0, 1, 8, 16, 31, 32}) check_sums(n, lanes_on);
}

TEST_CASE("a load predicated off reads nothing: every lane off, a null input, no fault", "[lab]") {
  const std::size_t n = std::size_t(1) << 20, warps = n / 32;
  course::device_buffer<int> sums(warps);
  course::test::poison_device(sums.get(), warps);
  warp::lab_predicated_sums(sums.get(), nullptr, n, 0);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto got = course::test::copy_to_host(sums.get(), warps);
  for (std::size_t w = 0; w < warps; ++w) REQUIRE(got[w] == 0);
}

TEST_CASE("lanes_on outside [0, 32] is refused", "[lab]") {
  course::device_buffer<int> in(64), sums(2);
  CHECK_THROWS_AS(warp::lab_predicated_sums(sums.get(), in.get(), 64, 33), std::invalid_argument);
  CHECK_THROWS_AS(warp::lab_predicated_sums(sums.get(), in.get(), 64, -1), std::invalid_argument);
}
