// SPDX-License-Identifier: BSD-3-Clause
// Tests of the predicated-load lab (lab_predicated_load.cu): the warp sums against the host for
// every count of active lanes, at sizes with a partial last warp and block; and a load that is
// predicated off reads no memory at all, so a null input with every lane off runs clean (memcheck
// included: make sanitize runs this program too). The input is followed by 256 guard elements
// holding 0x3fffffff (odd, so any number of them read moves a sum mod 2^32): a lane of the last
// warp that loads past n changes its warp's sum, which fails here and not only under memcheck.
// The sums are poisoned, with a guard zone that must stay so.
#include "lab_predicated_load.h"

#include "common/memory.h"
#include "common/random_fill.h"
#include "harness/catch.h"
#include "harness/sweep.h"
#include "harness/test_guards.h"
#include "harness/test_support.h"

#include <cstdint>
#include <string>
#include <vector>

namespace {

std::vector<int> host_sums(const std::vector<int> &in, int lanes_on) {
  std::vector<int> sums((in.size() + 31) / 32, 0);
  for (std::size_t i = 0; i < in.size(); ++i)
    if (int(i % 32) < lanes_on)
      sums[i / 32] = static_cast<int>(static_cast<std::uint32_t>(sums[i / 32]) +
                                      static_cast<std::uint32_t>(in[i]));
  return sums;
}

void check_sums(std::size_t n, int lanes_on, std::size_t in_offset = 0) {
  const std::uint64_t seed = course::fresh_seed();
  INFO("seed " << seed);
  const std::size_t warps = (n + 31) / 32;
  std::vector<int> h = course::test::random_ints(n, seed, -1000000, 1000000);
  auto in = course::test::guarded_input(h, in_offset, course::test::input_guard_value<int>());
  course::device_buffer<int> sums(warps + course::test::guard_elements);
  course::test::poison_device(sums.get(), warps + course::test::guard_elements);
  CUDA_CHECK(cudaDeviceSynchronize());
  warp::lab_predicated_sums(sums.get(), in.get(), n, lanes_on);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto want = host_sums(h, lanes_on);
  const auto got = course::test::copy_to_host(sums.get(), warps + course::test::guard_elements);
  const std::string what =
      "warp sums, " + std::to_string(lanes_on) + " lanes on" +
      (in_offset ? ", input offset " + std::to_string(in_offset) : std::string());
  const auto r = course::test::check_elements(
      warps, [&](std::size_t w) { return got[w]; }, [&](std::size_t w) { return want[w]; },
      [](std::size_t, int g, double w) { return double(g) == w; });
  if (!r.ok()) {
    const bool last = r.first + 1 == warps && n % 32 != 0 && int(n % 32) < lanes_on;
    FAIL(
        course::test::describe("lab_predicated_load", what, n, r)
        << (last
                ? " (the last warp, partly past n: the input's guard after n holds 0x3fffffff; a lane past n that "
                  "loads it changes the sum)"
                : ""));
  }
  const std::size_t written = course::test::first_written(got, warps);
  if (written != got.size())
    FAIL("lab_predicated_load, " << what << ", n=" << n
                                 << ": wrote past the last warp's sum, at element "
                                 << written - warps << " of the guard zone");
  const std::string damage = in.guard_damage();
  if (!damage.empty())
    FAIL("lab_predicated_load, " << what << ", n=" << n << ": the input's guard changed (" << damage
                                 << ")");
  if (in.download() != h)
    FAIL("lab_predicated_load, " << what << ", n=" << n << ": the input was modified");
  SUCCEED();
}

}  // namespace

TEST_CASE("warp sums of the first lanes_on lanes match the host", "[lab]") {
  // n % 32 of 1, 31, 3, 5 and 9: the last warp is partly past n, and most counts of lanes on
  // reach past it (the guard after n then changes the sum of a lab that loads there).
  for (std::size_t n : {std::size_t(1), std::size_t(31), std::size_t(33), std::size_t(257),
                        std::size_t(261), std::size_t(1000003), std::size_t(1000009)})
    for (int lanes_on : {0, 1, 2, 8, 16, 31, 32}) check_sums(n, lanes_on);
}

TEST_CASE("warp sums with the input misaligned, and a load past n read from the guard", "[lab]") {
  // Offsets 1..3 ints: the lab's loads are scalar, any alignment is fine; the guards sit before
  // the input too.
  for (std::size_t offset : {std::size_t(1), std::size_t(2), std::size_t(3)})
    for (std::size_t n : {std::size_t(33), std::size_t(100005)})
      for (int lanes_on : {1, 16, 32}) check_sums(n, lanes_on, offset);
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
