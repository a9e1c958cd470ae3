// SPDX-License-Identifier: BSD-3-Clause
// The declaration layer of the chapter benches (harness/bench_decl.h), on the host: the columns
// each kind of table declares are the ones the tools read in reference/<gpu>/<chapter>/bench.json,
// and the rows, goals, tallies and sweeps come out as the benches printed them before.
#include "harness/bench_decl.h"
#include "harness/bench_session.h"
#include "harness/catch.h"

#include <cmath>
#include <string>
#include <vector>

namespace {

using course::bench::cell;
using course::bench::column;

std::vector<std::string> names(const std::vector<column> &cols) {
  std::vector<std::string> out;
  for (const column &c : cols) out.push_back(c.name);
  return out;
}

std::vector<int> precisions(const std::vector<column> &cols) {
  std::vector<int> out;
  for (const column &c : cols) out.push_back(c.precision);
  return out;
}

bool near(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::fabs(b); }

course::bench::comparison pairs(double stage_ms, double baseline_ms, double lo, double median,
                                double hi, int n) {
  course::bench::comparison cmp;
  cmp.stage.per_call.median = stage_ms;
  cmp.baseline.per_call.median = baseline_ms;
  cmp.ratio.min = lo;
  cmp.ratio.median = median;
  cmp.ratio.max = hi;
  cmp.ratio.pairs = n;
  return cmp;
}

}  // namespace

TEST_CASE("versus tables declare the columns of the reference's comparison tables", "[bench]") {
  using course::bench::versus_columns;
  using course::bench::versus_spec;
  // 11-streaming's vs_cuBLAS and 12-reduction's vs_CUB: ms, ratios with 3 digits, no goal.
  const versus_spec blas("vs_cuBLAS", "t", "cuBLAS", {{"case", 0}, {"stage", 0}, {"n", 0}});
  CHECK(names(versus_columns(blas)) == std::vector<std::string>{"case", "stage", "n", "stage_ms",
                                                                "cuBLAS_ms", "vs_cuBLAS", "min",
                                                                "max", "pairs"});
  CHECK(precisions(versus_columns(blas)) == std::vector<int>{0, 0, 0, 4, 4, 3, 3, 3, 0});
  // 12-reduction's vs_CUB_by_n: us, a column of its own, then the goal.
  const auto by_n = versus_spec("vs_CUB_by_n", "t", "CUB", {{"n", 0}})
                        .in_microseconds()
                        .extra_columns({{"L2_flushed", 0}})
                        .goal_at_least(1.0);
  CHECK(names(versus_columns(by_n)) == std::vector<std::string>{"n", "stage_us", "CUB_us", "vs_CUB",
                                                                "min", "max", "pairs", "L2_flushed",
                                                                "goal"});
  CHECK(precisions(versus_columns(by_n)) == std::vector<int>{0, 2, 2, 3, 3, 3, 0, 0, 0});
  // 15-ncc's vs_NPP_by_template: ratios with 2 digits.
  const auto npp = versus_spec("vs_NPP_by_template", "t", "NPP",
                               {{"template", 0}, {"kind", 0}, {"stage", 0}, {"path", 0}})
                       .in_microseconds()
                       .ratio_digits(2)
                       .goal_at_least(10.0);
  CHECK(names(versus_columns(npp)) == std::vector<std::string>{"template", "kind", "stage", "path",
                                                               "stage_us", "NPP_us", "vs_NPP",
                                                               "min", "max", "pairs", "goal"});
  CHECK(precisions(versus_columns(npp)) == std::vector<int>{0, 0, 0, 0, 2, 2, 2, 2, 2, 0, 0});
}

TEST_CASE("versus rows: the keys, the two times, the ratio's range, extra cells, the goal",
          "[bench]") {
  using course::bench::versus_row;
  using course::bench::versus_spec;
  const auto by_n = versus_spec("vs_CUB_by_n", "t", "CUB", {{"n", 0}})
                        .in_microseconds()
                        .extra_columns({{"L2_flushed", 0}})
                        .goal_at_least(1.0);
  const auto met = pairs(0.002, 0.0021, 1.01, 1.05, 1.09, 40);
  course::bench::table t("vs_CUB_by_n", "t", versus_columns(by_n));
  t.add_row(versus_row(by_n, {1024.0}, met, {std::string("yes")}));
  t.add_row(
      versus_row(by_n, {2048.0}, pairs(0.002, 0.0019, 0.9, 0.95, 0.99, 40), {std::string("no")}));
  CHECK(t.csv() ==
        "n,stage_us,CUB_us,vs_CUB,min,max,pairs,L2_flushed,goal\n"
        "1024,2,2.1,1.05,1.01,1.09,40,yes,met\n2048,2,1.9,0.95,0.9,0.99,40,no,MISSED\n");
  CHECK(course::bench::versus_met(by_n, met));
  // Without a goal: no goal column, and times stay in ms.
  const versus_spec plain("vs_CUB", "t", "CUB", {{"case", 0}});
  CHECK(versus_row(plain, {std::string("aligned")}, met).size() == 7);
  CHECK(std::get<double>(versus_row(plain, {std::string("aligned")}, met)[1]) == 0.002);
}

TEST_CASE("goal tallies: met at k of n, and where the goal was missed", "[bench]") {
  course::bench::goal_tally all;
  all.add(true, "1024");
  all.add(true, "2048");
  CHECK(all.note("n = ") == "met at 2 of 2 sizes");
  CHECK(all.brief() == "met at 2 of 2");
  course::bench::goal_tally some;
  some.add(false, "8x8 (9.50x)");
  some.add(true, "12x12 (11.00x)");
  some.add(false, "96x96 (4.10x)");
  CHECK(some.met() == 1);
  CHECK(some.total() == 3);
  CHECK(some.note() == "met at 1 of 3 sizes; missed at 8x8 (9.50x), 96x96 (4.10x)");
  CHECK(some.note("n = ") == "met at 1 of 3 sizes; missed at n = 8x8 (9.50x), 96x96 (4.10x)");
  CHECK(some.brief() == "met at 1 of 3 (missed at 8x8 (9.50x), 96x96 (4.10x))");
  CHECK(course::bench::verdict(true) == "met");
  CHECK(course::bench::verdict(false) == "MISSED");
}

TEST_CASE("timed tables: lead columns, the timing columns, the bench's own", "[bench]") {
  using course::bench::timed_columns;
  const auto cols = timed_columns({{"kernel", 0}}, {{"rate", 1}, {"unit", 0}});
  CHECK(names(cols) == std::vector<std::string>{"kernel", "time_ms", "min_ms", "max_ms", "repeats",
                                                "spread%", "batch_ms", "rate", "unit"});
  course::bench::measurement m;
  m.per_call.median = 2;
  m.per_call.min = 1;
  m.per_call.max = 3;
  m.per_call.repeats = 10;
  m.per_call.spread = 0.01;
  m.batch_ms = 1.5;
  course::bench::table t("lab", "Lab", cols);
  t.add_row(course::bench::timed_row({std::string("fold")}, m, {4.0, std::string("GB/s")}));
  t.add_row(course::bench::timed_row({std::string("untimed")}, course::bench::measurement{}, {}));
  CHECK(t.csv() ==
        "kernel,time_ms,min_ms,max_ms,repeats,spread%,batch_ms,rate,unit\n"
        "fold,2,1,3,10,1,1.5,4,GB/s\nuntimed,,,,,,,,\n");
}

TEST_CASE("the launch-parameter sweep: rates per cell, each row's best, the heatmap", "[bench]") {
  course::bench::grid_spec g{"sweep_01", "Stage 01", "unroll",      "threads",
                             "GB/s",     {1, 2},     {32, 64, 128}, 1200.0};
  const auto t = course::bench::grid_table(g);
  CHECK(
      t.json() ==
      R"({"name": "sweep_01", "title": "Stage 01", "columns": ["unroll", "32", "64", "128", "max_GB/s", "max_threads"], "rows": [], "plot": {"kind": "heatmap", "x": "threads", "y": "unroll", "value": "GB/s", "columns_are_x": true, "skip_columns": ["max_GB/s", "max_threads"]}})");
  // 1200 bytes in 1 us: 1.2 GB/s; a refused cell is "-" and never the best.
  const auto row = course::bench::grid_row(g, 2, {0.001, std::nullopt, 0.0005});
  REQUIRE(row.size() == 6);
  CHECK(std::get<double>(row[0]) == 2);
  CHECK(near(std::get<double>(row[1]), 1.2));
  CHECK(std::holds_alternative<std::monostate>(row[2]));
  CHECK(near(std::get<double>(row[3]), 2.4));
  CHECK(near(std::get<double>(row[4]), 2.4));
  CHECK(std::get<double>(row[5]) == 128);
}

TEST_CASE("fastest keeps the first of equal times; first_mismatch finds the first bad element",
          "[bench]") {
  course::bench::fastest<std::string> f;
  CHECK_FALSE(f);
  CHECK(f.offer("a", 2.0));
  CHECK_FALSE(f.offer("b", 2.0));
  CHECK(f.offer("c", 1.0));
  CHECK_FALSE(f.offer("d", 3.0));
  CHECK(*f == "c");
  CHECK(f.ms == 1.0);
  const std::vector<float> got = {1.0f, 2.0f, float(std::nan("")), 4.0f};
  CHECK(course::bench::first_mismatch(got, std::vector<double>{1, 2, 3, 4}, 1e-5) == 2);
  CHECK(course::bench::first_mismatch(std::vector<float>{1, 2}, std::vector<double>{1, 2.00001},
                                      1e-4) == -1);
  CHECK(course::bench::first_mismatch(std::vector<float>{1, 2}, std::vector<double>{1, 2.1},
                                      1e-4) == 1);
}

TEST_CASE("fitted: the requested elements, or what fits in a share of free memory", "[bench]") {
  using course::bench::fitted;
  const std::size_t mega = std::size_t(1) << 20;
  // 80% of 1 GiB at 24 B per element: 35791394 elements, 34M of them in whole 2^20 units.
  CHECK(fitted(256 * mega, std::size_t(1) << 30, 80, 24, mega) == 34 * mega);
  CHECK(fitted(16 * mega, std::size_t(1) << 30, 80, 24, mega) == 16 * mega);
  CHECK(fitted(100, 1000, 40, 4, 1) == 100);
  CHECK(fitted(101, 1000, 40, 4, 1) == 100);
}

TEST_CASE("the stopping rule: the options' own, and exactly three calls under ncu", "[bench]") {
  course::bench::settings s;
  s.repeats = 20;
  s.max_repeats = 500;
  s.max_noise_pct = 2.0;
  const auto timed = s.rule();
  CHECK(timed.min_repeats == 20);
  CHECK(timed.max_repeats == 500);
  CHECK(std::fabs(timed.max_noise - 0.02) < 1e-12);  // no Approx: Catch2 v3 names it Catch::Approx
  s.profile_only = true;  // --profile-only: the profiled call's neighbours, not evidence
  const auto profiled = s.rule();
  CHECK(profiled.min_repeats == 3);
  CHECK(profiled.max_repeats == 3);
  CHECK(profiled.max_noise == 0);
}
