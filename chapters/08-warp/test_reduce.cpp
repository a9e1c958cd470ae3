// SPDX-License-Identifier: BSD-3-Clause
// Tests of the reduction stages (02 by shuffles, 03 in shared memory): every lane of every warp
// must hold its warp's sum, and the array sum must equal the host's at awkward sizes and every
// block size the stages accept. Integer sums compare exactly (modulo 2^32, as the GPU adds: the
// host sums in 64 bits and wraps); the inputs include negative values (fresh random data; the
// seed is printed on failure, COURSE_SEED replays). Inputs are followed (and, when misaligned,
// preceded) by guards holding 0x3fffffff: odd, so a read past the end changes the sum whatever
// the number of guard elements read. Outputs are poisoned, with a guard zone that must stay so.
#include "warp.h"

#include "common/memory.h"
#include "common/random.h"
#include "common/random_fill.h"
#include "harness/alloc_tracker.h"
#include "harness/catch.h"
#include "harness/leak_check.h"
#include "harness/sweep.h"
#include "harness/test_guards.h"
#include "harness/test_support.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

using course::test::guarded;

namespace {

const warp::reduce_stage &stage() { return course::test::stage_under_test<warp::reduce_stage>(); }

// A 64-bit sum as the GPU's 32-bit two's complement additions leave it.
int wrapped(std::int64_t sum) {
  return static_cast<int>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(sum)));
}

std::string offsets(std::size_t in_offset, std::size_t out_offset) {
  std::string s;
  if (in_offset) s += ", input offset " + std::to_string(in_offset);
  if (out_offset) s += ", output offset " + std::to_string(out_offset);
  return s;
}

// n_warps warps of values in [lo, hi]: out[32w + lane] must be warp w's sum, in every lane. The
// input starts in_offset ints into its allocation, the output out_offset.
void check_warp_sum(warp::warp_sum_fn warp_sum, const char *name, int n_warps, int lo, int hi,
                    std::size_t in_offset = 0, std::size_t out_offset = 0) {
  const std::uint64_t seed = course::fresh_seed();
  const std::size_t n = std::size_t(n_warps) * warp::lanes;
  std::vector<int> in = course::test::random_ints(n, seed, lo, hi);
  auto d_in = course::test::guarded_input(in, in_offset, course::test::input_guard_value<int>());
  auto d_out = guarded<int>::output(n, out_offset);
  warp_sum(d_out.get(), d_in.get(), n_warps);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto got = d_out.download();

  std::vector<std::int64_t> sums(n_warps, 0);
  for (std::size_t i = 0; i < n; ++i) sums[i / warp::lanes] += in[i];
  const std::string what = std::string(name) + ", " + std::to_string(n_warps) +
                           " warps of values in [" + std::to_string(lo) + ", " +
                           std::to_string(hi) + "]" + offsets(in_offset, out_offset);
  INFO("seed " << seed);
  auto report = course::test::check_elements(
      n, [&](std::size_t i) { return got[i]; },
      [&](std::size_t i) { return wrapped(sums[i / warp::lanes]); },
      [](std::size_t, int g, double want) { return g == want; });
  if (!report.ok())
    FAIL(course::test::describe(stage().info.id, what, n, report)
         << " (lane " << report.first % warp::lanes << " of warp " << report.first / warp::lanes
         << ")");
  SUCCEED();  // one assertion per checked call, so the summary counts them
  const std::string out_damage = d_out.guard_damage(), in_damage = d_in.guard_damage();
  if (!out_damage.empty())
    FAIL("stage " << stage().info.id << ", " << what << ": wrote outside the output (" << out_damage
                  << ")");
  if (!in_damage.empty())
    FAIL("stage " << stage().info.id << ", " << what << ": the input's guard changed (" << in_damage
                  << ")");
  if (d_in.download() != in)
    FAIL("stage " << stage().info.id << ", " << what << ": the input was modified");
}

std::string describe_config(std::size_t n, const warp::reduce_config &cfg) {
  return "n=" + std::to_string(n) + " threads=" + std::to_string(cfg.threads) +
         " blocks=" + (cfg.blocks ? std::to_string(cfg.blocks) : std::string("resident"));
}

// The sum of n values in [lo, hi], the input in_offset ints into its allocation and guarded, *out
// out_offset ints into its own (poisoned, with a guard zone).
void check_sum(std::size_t n, const warp::reduce_config &cfg, int lo = -1000, int hi = 1000,
               std::size_t in_offset = 0, std::size_t out_offset = 0) {
  const std::uint64_t seed = course::fresh_seed();
  std::vector<int> in = course::test::random_ints(n, seed, lo, hi);
  auto d_in = course::test::guarded_input(in, in_offset, course::test::input_guard_value<int>());
  auto d_out = guarded<int>::output(1, out_offset);
  stage().sum(d_out.get(), d_in.get(), n, cfg);  // synchronous
  const int got = d_out.download()[0];

  std::int64_t want = 0;
  for (int v : in) want += v;
  const std::string what = describe_config(n, cfg) + ", values in [" + std::to_string(lo) + ", " +
                           std::to_string(hi) + "]" + offsets(in_offset, out_offset);
  INFO("seed " << seed);
  if (got != wrapped(want))
    FAIL("stage " << stage().info.id << ", " << what << ": sum expected " << wrapped(want)
                  << (wrapped(want) != want ? " (" + std::to_string(want) + " modulo 2^32)"
                                            : std::string())
                  << ", got "
                  << (course::test::is_poison(got) ? "never written (poison)"
                                                   : std::to_string(got)));
  SUCCEED();
  const std::string out_damage = d_out.guard_damage(), in_damage = d_in.guard_damage();
  if (!out_damage.empty())
    FAIL("stage " << stage().info.id << ", " << what << ": wrote outside *out (" << out_damage
                  << ")");
  if (!in_damage.empty())
    FAIL("stage " << stage().info.id << ", " << what << ": the input's guard changed (" << in_damage
                  << ")");
  if (d_in.download() != in)
    FAIL("stage " << stage().info.id << ", " << what << ": the input was modified");
}

}  // namespace

TEST_CASE("every lane of every warp gets its warp's sum", "[warp_sum]") {
  struct named {
    warp::warp_sum_fn fn;
    const char *name;
  };
  for (named v :
       {named{stage().warp_sum, "warp_sum"}, named{stage().warp_sum_short, "warp_sum_short"}}) {
    if (!v.fn) continue;  // stage 02 has no shortened variant
    check_warp_sum(v.fn, v.name, 1, -1000000, 1000000);
    check_warp_sum(v.fn, v.name, 1001, -1000000, 1000000);
    check_warp_sum(v.fn, v.name, 64, -7, -7);  // all equal: 32 * -7 everywhere
    check_warp_sum(v.fn, v.name, 64, 0, 1);    // mostly small: a lane counted twice or missed shows
  }
}

TEST_CASE("the array sum matches the host at awkward sizes and every block size", "[sum]") {
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(31), std::size_t(32),
                        std::size_t(33), std::size_t(1000003)}) {
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

TEST_CASE("the array sum with input and output misaligned, each on its own", "[sum]") {
  // Each input offset and each output offset on its own, at sizes whose last warp, block or
  // grid-stride pass is partial.
  for (std::size_t n : {std::size_t(1), std::size_t(33), std::size_t(100003)}) {
    for (std::size_t off = 1; off < 4; ++off) {
      warp::reduce_config cfg;
      cfg.threads = 96;
      check_sum(n, cfg, -1000, 1000, off, 0);
      check_sum(n, cfg, -1000, 1000, 0, off);
    }
  }
}

TEST_CASE("the array sum allocates nothing it does not free", "[sum][memory]") {
  // The two-pass sum allocates its partial sums on each call and frees them before it returns.
  // Counted in this process only (harness/alloc_tracker.h), so other programs on the GPU do not
  // matter.
  const std::size_t n = 1000003;
  course::device_buffer<int> in(n), out(n);
  course::fill_random_device(in.get(), n, 5, -1000, 1000);
  auto call = [&] {
    for (int threads : {32, 256, 1024}) {
      warp::reduce_config cfg;
      cfg.threads = threads;
      stage().sum(out.get(), in.get(), n, cfg);
    }
    stage().warp_sum(out.get(), in.get(), int(n / warp::lanes));
    if (stage().warp_sum_short) stage().warp_sum_short(out.get(), in.get(), int(n / warp::lanes));
  };
  course::test::check_no_net_allocations("stage " + stage().info.id, call);
}

namespace {

using course::test::value_range;
// Mixed signs, one sign (the sum runs far from 0), 0 and 1 (a lane counted twice or missed
// shows), and magnitudes whose sums wrap around 2^32.
constexpr value_range value_ranges[] = {
    {-1000, 1000}, {1, 1000}, {-1000, -1}, {0, 1}, {-(1 << 30), 1 << 30}};

}  // namespace

// The seeded random sweep. Warp sums (both variants where the stage has two): random numbers of
// warps, so the last block of 8 warps is partial, each value range, input and output misaligned
// independently. Array sums: every block size the stages take (32, 64, ..., 1024, in turn),
// resident and tiny and arbitrary grids, sizes at the warp, block and grid-stride boundaries,
// primes, one size above 2^24; input and output offsets 0..3 ints each, independently; the
// input's guards hold 0x3fffffff, so a read past the end changes the sum. A failure names the
// case; the test main prints the replay line.
TEST_CASE("seeded random sweep: warp sums and array sums", "[sweep]") {
  course::test::sweep_rng rng(course::fresh_seed());
  INFO("sweep seed " << rng.seed());
  const int warp_cases = 24;
  for (int c = 0; c < warp_cases; ++c) {
    const bool use_short = stage().warp_sum_short && c % 2 == 1;
    const int n_warps = int(rng.awkward_size({8, 32, 256}, 20000));
    const value_range r = value_ranges[rng.below(std::size(value_ranges))];
    const std::size_t in_offset = rng.below(4), out_offset = rng.below(4);
    INFO("warp case " << c);
    check_warp_sum(use_short ? stage().warp_sum_short : stage().warp_sum,
                   use_short ? "warp_sum_short" : "warp_sum", n_warps, r.lo, r.hi, in_offset,
                   out_offset);
  }
  const int sum_cases = 64;  // every block size twice
  for (int c = 0; c < sum_cases; ++c) {
    warp::reduce_config cfg;
    cfg.threads = warp::lanes * (1 + c % 32);
    cfg.blocks = rng.pick({0, 0, 0, 1, 2, 3, 7, int(rng.between(8, 4096))});
    const std::size_t grid = cfg.blocks ? std::size_t(cfg.blocks) * cfg.threads
                                        : course::test::resident_threads(cfg.threads);
    std::size_t n =
        rng.awkward_size({std::size_t(warp::lanes), std::size_t(cfg.threads), grid}, 3000000);
    if (c == 41) n = (std::size_t(1) << 24) + rng.between(1, 1 << 20);
    const value_range r = value_ranges[rng.below(std::size(value_ranges))];
    const std::size_t in_offset = rng.below(4), out_offset = rng.below(4);
    INFO("sum case " << c);
    check_sum(n, cfg, r.lo, r.hi, in_offset, out_offset);
  }
}
