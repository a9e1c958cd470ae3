// SPDX-License-Identifier: BSD-3-Clause
// Host-only tests of the chapter's host side (no GPU needed): the host scans every GPU test and
// the benchmark compare against (13.2), their wrap-around, and the predicates of stages 07 and 09.
#include "host_scan.h"
#include "scan.h"

#include "common/random.h"
#include "harness/catch.h"

#include <climits>
#include <cstdint>
#include <vector>

TEST_CASE("inclusive and exclusive host scans of a small array", "[host]") {
  const std::vector<int> in = {3, -1, 4, 1, -5, 9, 2, -6};
  std::vector<int> out(in.size());
  scan::host_inclusive_scan(out.data(), in.data(), in.size());
  CHECK(out == std::vector<int>{3, 2, 6, 7, 2, 11, 13, 7});
  scan::host_exclusive_scan(out.data(), in.data(), in.size());
  CHECK(out == std::vector<int>{0, 3, 2, 6, 7, 2, 11, 13});
}

TEST_CASE("host scans of zero and one element", "[host]") {
  int x = 42, y = -7;
  scan::host_inclusive_scan(&y, &x, 0);
  CHECK(y == -7);  // nothing written
  scan::host_inclusive_scan(&y, &x, 1);
  CHECK(y == 42);
  scan::host_exclusive_scan(&y, &x, 1);
  CHECK(y == 0);
}

TEST_CASE("host scans in place equal out-of-place ones", "[host]") {
  for (bool inclusive : {true, false}) {
    std::vector<int> in(1000003), out(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = course::random_int(5, i, -1000, 1000);
    scan::host_scan(out.data(), in.data(), in.size(), inclusive);
    scan::host_scan(in.data(), in.data(), in.size(), inclusive);
    INFO((inclusive ? "inclusive" : "exclusive"));
    CHECK(in == out);
  }
}

TEST_CASE("exclusive = inclusive shifted by one; the last inclusive is the total", "[host]") {
  std::vector<int> in(4097), inc(in.size()), exc(in.size());
  long long total = 0;
  for (std::size_t i = 0; i < in.size(); ++i)
    total += in[i] = course::random_int(9, i, -1000, 1000);
  scan::host_inclusive_scan(inc.data(), in.data(), in.size());
  scan::host_exclusive_scan(exc.data(), in.data(), in.size());
  CHECK(exc[0] == 0);
  for (std::size_t i = 1; i < in.size(); ++i) REQUIRE(exc[i] == inc[i - 1]);
  CHECK(inc.back() == total);
}

TEST_CASE("the host scan wraps mod 2^32 as the GPU's int additions do", "[host]") {
  CHECK(scan::wrap_add(INT_MAX, 1) == INT_MIN);
  CHECK(scan::wrap_add(INT_MIN, -1) == INT_MAX);
  const std::vector<int> in = {INT_MAX, 1, INT_MAX, 2};
  std::vector<int> out(in.size());
  scan::host_inclusive_scan(out.data(), in.data(), in.size());
  CHECK(out == std::vector<int>{INT_MAX, INT_MIN, -1, 1});
}

TEST_CASE("the predicates of stages 07 and 09 and the block sizes the stages accept", "[host]") {
  CHECK(scan::keep(scan::predicate::odd, -3));
  CHECK_FALSE(scan::keep(scan::predicate::odd, -4));
  CHECK(scan::keep(scan::predicate::even, 0));
  CHECK(scan::keep(scan::predicate::positive, 1));
  CHECK_FALSE(scan::keep(scan::predicate::positive, 0));
  CHECK(scan::keep(scan::predicate::all, 7));
  CHECK_FALSE(scan::keep(scan::predicate::none, 7));
  std::vector<int> ok;
  for (int t = -1; t <= 2048; ++t)
    if (scan::supports_threads(t)) ok.push_back(t);
  CHECK(ok == std::vector<int>{32, 64, 128, 256, 512, 1024});
}

TEST_CASE("host segmented scan (stage 11's reference): restarts at heads, 0 at a head if exclusive",
          "[host]") {
  const std::vector<int> in = {3, -1, 4, 1, -5, 9, 2, -6};
  const std::vector<std::uint8_t> heads = {0, 0, 1, 0,
                                           1, 1, 0, 0};  // element 0 starts a segment anyway
  std::vector<int> out(in.size());
  scan::host_segmented_scan(out.data(), in.data(), heads.data(), in.size(), true);
  CHECK(out == std::vector<int>{3, 2, 4, 5, -5, 9, 11, 5});
  scan::host_segmented_scan(out.data(), in.data(), heads.data(), in.size(), false);
  CHECK(out == std::vector<int>{0, 3, 0, 4, 0, 0, 9, 11});
  // No heads: the plain scan; every element a head: inclusive copies, exclusive is all zeros.
  const std::vector<std::uint8_t> none(in.size(), 0), all(in.size(), 1);
  std::vector<int> plain(in.size());
  scan::host_inclusive_scan(plain.data(), in.data(), in.size());
  scan::host_segmented_scan(out.data(), in.data(), none.data(), in.size(), true);
  CHECK(out == plain);
  scan::host_segmented_scan(out.data(), in.data(), all.data(), in.size(), true);
  CHECK(out == in);
  scan::host_segmented_scan(out.data(), in.data(), all.data(), in.size(), false);
  CHECK(out == std::vector<int>(in.size(), 0));
  // In place.
  std::vector<int> io = in;
  scan::host_segmented_scan(io.data(), io.data(), heads.data(), io.size(), false);
  CHECK(io == std::vector<int>{0, 3, 0, 4, 0, 0, 9, 11});
}

TEST_CASE("host split (stage 12's reference): kept in order, then the rest in order", "[host]") {
  const std::vector<int> in = {3, -1, 4, 1, -5, 9, 2, -6, 0};
  std::vector<int> out(in.size());
  const std::size_t kept = scan::host_split(
      out.data(), in.data(), in.size(), [](int x) { return scan::keep(scan::predicate::odd, x); });
  CHECK(kept == 5);
  CHECK(out == std::vector<int>{3, -1, 1, -5, 9, 4, 2, -6, 0});
  CHECK(scan::host_split(out.data(), in.data(), 0, [](int) { return true; }) == 0);
}
