// SPDX-License-Identifier: BSD-3-Clause
// Host tests of common/ and harness/: they need no GPU and run everywhere, CI included.
#include "common/cli.h"
#include "common/random.h"
#include "common/random_fill.h"
#include "harness/bench.h"
#include "harness/catch.h"
#include "harness/test_support.h"

#include <cmath>
#include <string>
#include <vector>

namespace {

std::string parse(course::options &o, std::vector<const char *> argv) {
  argv.insert(argv.begin(), "prog");
  bool help = false;
  return o.try_parse(static_cast<int>(argv.size()), argv.data(), help);
}

}  // namespace

TEST_CASE("options: values, defaults and one-line errors naming the flag", "[cli]") {
  std::int64_t n = 128;
  double dt = 0.01;
  bool quiet = false;
  std::string name = "x";
  course::options o("prog", "test");
  o.add("N", n, 1, 4096, "size").add("dt", dt, 0.0, 1.0, "step").flag("quiet", quiet, "less output").add("name", name, "a name");

  CHECK(parse(o, {"--N", "64", "--dt=0.5", "--quiet", "-name", "y"}).empty());
  CHECK(n == 64);
  CHECK(dt == 0.5);
  CHECK(quiet);
  CHECK(name == "y");

  CHECK(parse(o, {"--bogus", "1"}) == "unknown option --bogus (see --help)");
  CHECK(parse(o, {"--N", "12x"}) == "--N: expected a whole number, got '12x'");
  CHECK(parse(o, {"--N", "0"}) == "--N: value 0 is out of range [1, 4096]");
  CHECK(parse(o, {"--N"}) == "--N: missing value");
  CHECK(parse(o, {"--dt", "nan"}) == "--dt: expected a number, got 'nan'");
  CHECK(parse(o, {"--quiet=1"}) == "--quiet: takes no value");
  CHECK(parse(o, {"stray"}).find("unexpected argument 'stray'") == 0);
  CHECK(o.usage().find("--N <v>") != std::string::npos);
}

TEST_CASE("random data: deterministic, in range, never all zeros", "[random]") {
  std::vector<float> a(1000), b(1000);
  course::fill_random_host(a.data(), a.size(), 42);
  course::fill_random_host(b.data(), b.size(), 42);
  CHECK(a == b);
  course::fill_random_host(b.data(), b.size(), 43);
  CHECK(a != b);
  int negatives = 0;
  for (float v : a) {
    CHECK(v >= -1.0f);
    CHECK(v < 1.0f);
    negatives += v < 0;
  }
  CHECK(negatives > 400);
  CHECK(negatives < 600);
  for (int i = 0; i < 1000; ++i) {
    auto v = course::random_int(7, i, -3, 3);
    CHECK(v >= -3);
    CHECK(v <= 3);
  }
}

TEST_CASE("element checks report the first wrong index, expected and actual", "[test_support]") {
  const std::size_t n = 1 << 20;  // large enough to run on every core
  std::vector<float> got(n, 1.0f);
  got[777777] = 2.0f;
  got[900000] = 3.0f;
  course::test::poison_host(got.data() + n - 1, 1);
  auto r = course::test::check_elements(
      n, [&](std::size_t i) { return got[i]; }, [](std::size_t) { return 1.0; },
      [](std::size_t, float g, double w) { return course::test::close(g, w, 1.0, 1e-6); });
  CHECK(r.wrong == 3);
  CHECK(r.first == 777777);
  CHECK(r.expected == 1.0);
  CHECK(r.actual == 2.0);
  auto text = course::test::describe("01_grid_stride", "n=1048576", n, r);
  CHECK(text == "stage 01_grid_stride, n=1048576: 3 of 1048576 elements wrong; first [777777]: expected 1, got 2");

  std::vector<float> unwritten(8);
  course::test::poison_host(unwritten.data(), 8);
  auto p = course::test::check_elements(
      8, [&](std::size_t i) { return unwritten[i]; }, [](std::size_t) { return 0.0; },
      [](std::size_t, float g, double w) { return course::test::close(g, w, 1.0, 1e-6); });
  CHECK(course::test::describe("s", "n=8", 8, p).find("never written (poison)") != std::string::npos);
}

TEST_CASE("benchmark tables print aligned and serialise to CSV and JSON", "[bench]") {
  using course::bench::cell;
  course::bench::table t("prog", "Progression", {{"stage", 0}, {"GB/s", 1}, {"note", 0}});
  t.add_row({std::string("01_grid_stride"), 2650.04, cell()});
  t.add_row({std::string("a,b"), std::nan(""), std::string("TODO")});
  t.set_plot(R"({"kind": "bars", "x": "stage", "y": "GB/s"})");
  CHECK(t.csv() == "stage,GB/s,note\n01_grid_stride,2650.04,\n\"a,b\",,TODO\n");
  CHECK(t.json() ==
        R"({"name": "prog", "title": "Progression", "columns": ["stage", "GB/s", "note"], "rows": [["01_grid_stride", 2650.04, null], ["a,b", null, "TODO"]], "plot": {"kind": "bars", "x": "stage", "y": "GB/s"}})");
  CHECK(course::bench::json_string("a\"b\\c\n") == R"("a\"b\\c\n")");
  auto s = course::bench::summarize({5, 1, 3, 2});
  CHECK(s.median_ms == 2.5);
  CHECK(s.min_ms == 1);
  CHECK(s.max_ms == 5);
}
