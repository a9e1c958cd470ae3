// SPDX-License-Identifier: BSD-3-Clause
// Tests of the reduction stages (02 by shuffles, 03 in shared memory): every lane of every warp
// must hold its warp's sum, and the array sum must equal the host's at awkward sizes and every
// block size the stages accept. Integer sums compare exactly; the inputs include negative values
// (fresh random data; the seed is printed on failure, COURSE_SEED replays).
#include "warp.h"

#include "common/memory.h"
#include "common/random.h"
#include "common/random_fill.h"
#include "harness/catch.h"
#include "harness/test_support.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

using course::test::guard_elements;

namespace {

const warp::reduce_stage &stage() { return course::test::stage_under_test<warp::reduce_stage>(); }

// n_warps warps of values in [lo, hi]: out[32w + lane] must be warp w's sum, in every lane.
void check_warp_sum(warp::warp_sum_fn warp_sum, const char *name, int n_warps, int lo, int hi) {
  const std::uint64_t seed = course::fresh_seed();
  const std::size_t n = std::size_t(n_warps) * warp::lanes;
  course::device_buffer<int> in(n), out(n + guard_elements);
  course::fill_random_device(in.get(), n, seed, lo, hi);
  course::test::poison_device(out.get(), n + guard_elements);
  warp_sum(out.get(), in.get(), n_warps);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto got = course::test::copy_to_host(out.get(), n + guard_elements);

  std::vector<std::int64_t> sums(n_warps, 0);
  for (std::size_t i = 0; i < n; ++i) sums[i / warp::lanes] += course::random_int(seed, i, lo, hi);
  const std::string what = std::string(name) + ", " + std::to_string(n_warps) + " warps of values in [" +
                           std::to_string(lo) + ", " + std::to_string(hi) + "]";
  auto report = course::test::check_elements(
      n, [&](std::size_t i) { return got[i]; }, [&](std::size_t i) { return sums[i / warp::lanes]; },
      [](std::size_t, int g, double want) { return g == want; });
  INFO("seed " << seed << " (COURSE_SEED replays the run)");
  if (!report.ok())
    FAIL(course::test::describe(stage().info.id, what, n, report)
         << " (lane " << report.first % warp::lanes << " of warp " << report.first / warp::lanes << ")");
  SUCCEED();  // one assertion per checked call, so the summary counts them
  const std::size_t past = course::test::first_written(got, n);
  if (past < got.size()) FAIL("stage " << stage().info.id << ", " << what << ": wrote past the last warp, at " << past);
}

std::string describe_config(std::size_t n, const warp::reduce_config &cfg) {
  return "n=" + std::to_string(n) + " threads=" + std::to_string(cfg.threads) +
         " blocks=" + (cfg.blocks ? std::to_string(cfg.blocks) : std::string("resident"));
}

// The sum of n values in [lo, hi] (the sums stay within int range for the sizes used here).
void check_sum(std::size_t n, const warp::reduce_config &cfg, int lo = -1000, int hi = 1000) {
  const std::uint64_t seed = course::fresh_seed();
  course::device_buffer<int> in(n), out(1 + guard_elements);
  course::fill_random_device(in.get(), n, seed, lo, hi);
  course::test::poison_device(out.get(), 1 + guard_elements);
  stage().sum(out.get(), in.get(), n, cfg);
  const auto got = course::test::copy_to_host(out.get(), 1 + guard_elements);

  std::int64_t want = 0;
  for (std::size_t i = 0; i < n; ++i) want += course::random_int(seed, i, lo, hi);
  INFO("seed " << seed << " (COURSE_SEED replays the run)");
  if (got[0] != want)
    FAIL("stage " << stage().info.id << ", " << describe_config(n, cfg) << ", values in [" << lo << ", " << hi
                  << "]: sum expected " << want << ", got "
                  << (course::test::is_poison(got[0]) ? "never written (poison)" : std::to_string(got[0])));
  SUCCEED();
  const std::size_t past = course::test::first_written(got, 1);
  if (past < got.size())
    FAIL("stage " << stage().info.id << ", " << describe_config(n, cfg) << ": wrote past *out, at index " << past);
}

}  // namespace

TEST_CASE("every lane of every warp gets its warp's sum", "[warp_sum]") {
  struct named {
    warp::warp_sum_fn fn;
    const char *name;
  };
  for (named v : {named{stage().warp_sum, "warp_sum"}, named{stage().warp_sum_short, "warp_sum_short"}}) {
    if (!v.fn) continue;  // stage 02 has no shortened variant
    check_warp_sum(v.fn, v.name, 1, -1000000, 1000000);
    check_warp_sum(v.fn, v.name, 1001, -1000000, 1000000);
    check_warp_sum(v.fn, v.name, 64, -7, -7);  // all equal: 32 * -7 everywhere
    check_warp_sum(v.fn, v.name, 64, 0, 1);    // mostly small: a lane counted twice or missed shows
  }
}

TEST_CASE("the array sum matches the host at awkward sizes and every block size", "[sum]") {
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(31), std::size_t(32), std::size_t(33),
                        std::size_t(1000003)}) {
    for (int threads : {32, 64, 96, 128, 160, 256, 512, 992, 1024}) {
      warp::reduce_config cfg;
      cfg.threads = threads;
      check_sum(n, cfg);
    }
  }
}

TEST_CASE("the array sum with tiny grids, and values of one sign", "[sum]") {
  for (int blocks : {1, 7}) {
    warp::reduce_config cfg;
    cfg.blocks = blocks;
    check_sum(1000003, cfg);
  }
  check_sum(1000003, {}, -1000, -1000);  // -1000003000: near the bottom of the int range
  check_sum(1000003, {}, 1, 1000);
  check_sum(33, {}, -1000, -1);
}

TEST_CASE("block sizes that are not whole warps are refused", "[sum]") {
  course::device_buffer<int> in(64), out(1);
  for (int threads : {0, 16, 33, 100, 2048}) {
    warp::reduce_config cfg;
    cfg.threads = threads;
    INFO("threads=" << threads);
    CHECK_THROWS_AS(stage().sum(out.get(), in.get(), 64, cfg), std::invalid_argument);
  }
}
