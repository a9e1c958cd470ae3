// SPDX-License-Identifier: BSD-3-Clause
// Host tests of common/ and harness/: they need no GPU and run everywhere, CI included.
#include "common/cli.h"
#include "common/device.h"
#include "common/random.h"
#include "common/random_fill.h"
#include "harness/bench.h"
#include "harness/bench_stats.h"
#include "harness/catch.h"
#include "harness/test_support.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
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
  o.add("N", n, 1, 4096, "size")
      .add("dt", dt, 0.0, 1.0, "step")
      .flag("quiet", quiet, "less output")
      .add("name", name, "a name");

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
  CHECK(
      text ==
      "stage 01_grid_stride, n=1048576: 3 of 1048576 elements wrong; first [777777]: expected 1, got 2");

  std::vector<float> unwritten(8);
  course::test::poison_host(unwritten.data(), 8);
  auto p = course::test::check_elements(
      8, [&](std::size_t i) { return unwritten[i]; }, [](std::size_t) { return 0.0; },
      [](std::size_t, float g, double w) { return course::test::close(g, w, 1.0, 1e-6); });
  CHECK(course::test::describe("s", "n=8", 8, p).find("never written (poison)") !=
        std::string::npos);
}

TEST_CASE("sizes shrink under a sanitizer only, keeping their remainder mod 4096",
          "[test_support]") {
  // COURSE_SANITIZER is read once per process: make check runs this without it, sanitize.sh with.
  CHECK(course::test::sanitizer_size(0) == 0);
  CHECK(course::test::sanitizer_size(131072) == 131072);
  if (course::test::under_sanitizer()) {
    CHECK(course::test::sanitizer_size(1000003) == 131072 + 1000003 % 4096);
    CHECK(course::test::sanitizer_size(131073) == 131072 + 131073 % 4096);
  } else {
    CHECK(course::test::sanitizer_size(1000003) == 1000003);
  }
}

// Every kind of hint the benches give, written exactly as plots/plot.py has always read it.
TEST_CASE("plot hints serialise to the JSON objects plots/plot.py reads", "[bench]") {
  using course::bench::plot_hint;
  plot_hint heatmap("heatmap", "threads", "unroll");
  heatmap.value = "GB/s";
  heatmap.columns_are_x = true;
  heatmap.skip_columns = {"max_GB/s", "max_threads"};
  CHECK(
      heatmap.json() ==
      R"({"kind": "heatmap", "x": "threads", "y": "unroll", "value": "GB/s", "columns_are_x": true, "skip_columns": ["max_GB/s", "max_threads"]})");
  plot_hint floor("bars", "stage", "wall_ms");
  floor.ceiling_from_row = "transfer floor (pinned)";
  floor.ceiling_label = "transfer floor";
  floor.lower_is_better = true;
  CHECK(
      floor.json() ==
      R"j({"kind": "bars", "x": "stage", "y": "wall_ms", "ceiling_from_row": "transfer floor (pinned)", "ceiling_label": "transfer floor", "lower_is_better": true})j");
  plot_hint lines("lines", "n", "GB/s");
  lines.series = "series";
  lines.logx = true;
  CHECK(lines.json() ==
        R"({"kind": "lines", "x": "n", "y": "GB/s", "series": "series", "logx": true})");
  lines.logx = false;
  lines.logy = true;
  CHECK(lines.json() ==
        R"({"kind": "lines", "x": "n", "y": "GB/s", "series": "series", "logy": true})");
  CHECK(plot_hint("lines", "streams", "time_ms").json() ==
        R"({"kind": "lines", "x": "streams", "y": "time_ms"})");
  CHECK(
      plot_hint::stage_bars("GB/s", "read ceiling (float4 loads)", "read ceiling").json() ==
      R"j({"kind": "bars", "x": "stage", "y": "GB/s", "ceiling_from_row": "read ceiling (float4 loads)", "ceiling_label": "read ceiling"})j");
  CHECK(plot_hint::stage_bars("Gtpix/s").json() ==
        R"({"kind": "bars", "x": "stage", "y": "Gtpix/s"})");
}

TEST_CASE("benchmark tables print aligned and serialise to CSV and JSON", "[bench]") {
  using course::bench::cell;
  course::bench::table t("prog", "Progression", {{"stage", 0}, {"GB/s", 1}, {"note", 0}});
  t.add_row({std::string("01_grid_stride"), 2650.04, cell()});
  t.add_row({std::string("a,b"), std::nan(""), std::string("TODO")});
  t.set_plot({"bars", "stage", "GB/s"});
  CHECK(t.csv() == "stage,GB/s,note\n01_grid_stride,2650.04,\n\"a,b\",,TODO\n");
  CHECK(
      t.json() ==
      R"({"name": "prog", "title": "Progression", "columns": ["stage", "GB/s", "note"], "rows": [["01_grid_stride", 2650.04, null], ["a,b", null, "TODO"]], "plot": {"kind": "bars", "x": "stage", "y": "GB/s"}})");
  CHECK(course::bench::json_string("a\"b\\c\n") == R"("a\"b\\c\n")");
  auto s = course::bench::summarize({5, 1, 3, 2});
  CHECK(s.median_ms == 2.5);
  CHECK(s.min_ms == 1);
  CHECK(s.max_ms == 5);
}

TEST_CASE("benchmark statistics: median, min, max, spread as the relative std-dev", "[bench]") {
  using course::bench::describe;
  auto none = describe({});
  CHECK(none.repeats == 0);
  CHECK(none.median == 0);
  auto one = describe({4});
  CHECK(one.median == 4);
  CHECK(one.spread == 0);
  auto s = describe({5, 1, 3, 2});  // any order
  CHECK(s.median == 2.5);
  CHECK(s.min == 1);
  CHECK(s.max == 5);
  CHECK(s.mean == 2.75);
  CHECK(s.repeats == 4);
  // sample std-dev of {1, 2, 3, 5}: sqrt(8.75 / 3)
  CHECK(std::fabs(s.spread - std::sqrt(8.75 / 3) / 2.75) < 1e-12);
  CHECK(describe({7, 7, 7}).spread == 0);
  CHECK(describe({3, 1, 2}).median == 2);
  CHECK_FALSE(course::bench::noisy(describe({100, 101, 99, 100})));
  CHECK(course::bench::noisy(describe({100, 120, 80, 100})));
}

TEST_CASE("benchmark stopping rule: at least min repeats, then quiet, max repeats or time cap",
          "[bench]") {
  using course::bench::should_stop;
  using course::bench::stop_reason;
  course::bench::stop_rule rule;
  rule.min_repeats = 4;
  rule.max_repeats = 8;
  rule.max_noise = 0.01;
  rule.max_seconds = 1.0;
  const std::vector<double> quiet = {1.0, 1.001, 0.999, 1.0};
  const std::vector<double> loud = {1.0, 1.5, 0.5, 1.0};
  CHECK(should_stop({}, 0, rule) == stop_reason::go_on);
  CHECK(should_stop({1.0, 1.0, 1.0}, 5.0, rule) ==
        stop_reason::go_on);  // never before min repeats, even past the cap
  CHECK(should_stop(quiet, 0, rule) == stop_reason::quiet);
  CHECK(should_stop(loud, 0.1, rule) == stop_reason::go_on);
  CHECK(should_stop(loud, 1.0, rule) == stop_reason::time_cap);
  std::vector<double> eight = loud;
  eight.insert(eight.end(), loud.begin(), loud.end());
  CHECK(should_stop(eight, 0.1, rule) == stop_reason::max_repeats);
  rule.max_noise = 0;  // no noise criterion: exactly min repeats
  CHECK(should_stop(loud, 0, rule) == stop_reason::quiet);
  CHECK(std::string(course::bench::to_string(stop_reason::time_cap)) == "time cap");
}

TEST_CASE("benchmark interleaved pairs: the ratio's median and range over the pairs", "[bench]") {
  using course::bench::pair_ratios;
  // baseline / stage per pair: 1.1, 1.0, 1.2 (the last pair's zero is left out)
  auto r = pair_ratios({1.1, 2.0, 1.2, 1.0}, {1.0, 2.0, 1.0, 0.0});
  CHECK(r.pairs == 3);
  CHECK(std::fabs(r.median - 1.1) < 1e-12);
  CHECK(r.min == 1.0);
  CHECK(std::fabs(r.max - 1.2) < 1e-12);
  CHECK(course::bench::range_text(r) == "1.00-1.20x");
  CHECK(course::bench::range_text(pair_ratios({2.0, 2.0}, {1.0, 1.0})) == "2.00x");
  CHECK(pair_ratios({}, {}).pairs == 0);
  CHECK(course::bench::batch_calls(0.5) == 4);
  CHECK(course::bench::batch_calls(100.0) == 2);
  CHECK(course::bench::batch_calls(0.0001) == 1000);
}

TEST_CASE("benchmark tables carry notes under them and in the JSON", "[bench]") {
  course::bench::table t("t", "T", {{"stage", 0}});
  t.add_row({std::string("01")});
  t.note("warning: 01: spread 7.0%");
  CHECK(t.json().find(R"("notes": ["warning: 01: spread 7.0%"])") != std::string::npos);
}

TEST_CASE("benchmark report: schema /2 with clocks, versions, timing, headlines and table notes",
          "[bench]") {
  course::device_info d;
  d.name = "Test GPU";
  d.sm_clock_mhz = 1980;
  d.runtime_version = 13000;
  d.driver_version = 13000;
  course::bench::report rep("99-test", "Chapter 99", d);
  rep.version("CCCL", "3.0.1");
  rep.version("cuBLAS", "13.0.0");
  rep.sustained_clock(1755.5);
  rep.timing(R"({"min_repeats": 10})");
  rep.headline("test 01 against LIB: 1.00-1.02x");
  course::bench::table t("progression", "P", {{"stage", 0}, {"time_ms", 3}});
  t.add_row({std::string("01_first"), 1.5});
  t.note("warning: 01_first: spread 6.0%");
  rep.add(t);
  char tmpl[] = "/tmp/course-report-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;
  rep.write(dir);
  std::ifstream in(dir + "/99-test.json");
  const std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const char *part :
       {R"("schema": "cuda-course-bench/2")", R"("sm_peak_mhz": 1980, "sm_sustained_mhz": 1755.5)",
        R"("versions": {"driver": "13.0", "runtime": "13.0", "CCCL": "3.0.1", "cuBLAS": "13.0.0"})",
        R"("timing": {"min_repeats": 10})", R"("headlines": ["test 01 against LIB: 1.00-1.02x"])",
        R"("notes": ["warning: 01_first: spread 6.0%"])"})
    CHECK(json.find(part) != std::string::npos);
  std::remove((dir + "/99-test.json").c_str());
  std::remove((dir + "/99-test.progression.csv").c_str());
  std::remove(dir.c_str());
}

TEST_CASE("benchmark report: the preamble names the event pair's floor the times have taken off",
          "[bench]") {
  course::device_info d;
  d.name = "Test GPU";
  course::bench::report rep("99-test", "Chapter 99", d);
  const auto preamble = [&rep] {
    std::FILE *f = std::tmpfile();
    REQUIRE(f != nullptr);
    rep.print_preamble(f);
    std::rewind(f);
    std::string text;
    for (int c; (c = std::fgetc(f)) != EOF;) text += static_cast<char>(c);
    std::fclose(f);
    return text;
  };
  CHECK(preamble().find("event pair") == std::string::npos);  // not measured: no line
  rep.event_floor(0.0029);
  CHECK(rep.event_floor_ms() == 0.0029);
  CHECK(preamble().find("event pair with nothing between: 2.90 us here (median of 101), taken off "
                        "every per-call time below") != std::string::npos);
}

TEST_CASE(
    "device_code_version: the compute_XY of this build that the GPU present runs, 0 without one",
    "[device]") {
  const int version = course::device_code_version();
  if (!course::probe_gpu().usable) {
    CHECK(version == 0);
    return;
  }
  // COURSE_CUDA_ARCHITECTURES: the build's CMAKE_CUDA_ARCHITECTURES, commas for semicolons
  // ("75-real,90"). The version must be one of them: a GPU the build holds no code for gets 0.
  std::vector<int> built;
  const std::string archs = COURSE_CUDA_ARCHITECTURES;
  for (std::size_t at = 0; at < archs.size();) {
    std::size_t end = archs.find(',', at);
    if (end == std::string::npos) end = archs.size();
    const std::string a = archs.substr(at, end - at);
    if (!a.empty() && std::isdigit(static_cast<unsigned char>(a[0])))
      built.push_back(std::atoi(a.c_str()));
    at = end + 1;
  }
  INFO("built for " << archs << "; this GPU: compute capability " << course::query_device().cc()
                    << ", runs compute_" << version);
  CHECK(version > 0);
  if (!built.empty()) CHECK(std::find(built.begin(), built.end(), version) != built.end());
}
