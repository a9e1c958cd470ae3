// SPDX-License-Identifier: BSD-3-Clause
// Tests of every reduction stage. Each test program is built with one stage; every check runs on
// fresh random inputs (the seed is printed on failure; COURSE_SEED replays).
//
// Integer sums: inputs are random ints in [-1000, 1000] (negative values included). The GPU adds
// in 32-bit two's complement, so its answer is the true sum mod 2^32 whatever the order; the host
// reference is the exact sum in 64 bits, reduced mod 2^32 the same way, and the two must be equal.
// (With inputs this small the true sum of random data stays far inside int range in practice:
// about 577 * sqrt(n), so no partial sum on the GPU overflows either.)
//
// Every input is guarded (harness/sweep.h): it starts `offset` ints into its allocation, and the
// elements before it and the 256 after it hold a value that changes the answer if a stage reads
// one: 0x3fffffff for the sums (odd, so any number of stray reads moves the sum mod 2^32), NaN for
// the float sums, INT_MAX or INT_MIN for min and max (one call with each), INT_MAX for the
// counts (greater than every threshold tested). After each call the guards must be intact and
// the input unchanged. Answers sit in a poisoned slot followed by 256 poisoned guard elements.
#include "host_reference.h"
#include "reduction.h"

#include "common/device.h"
#include "common/random.h"
#include "common/random_fill.h"
#include "harness/alloc_tracker.h"
#include "harness/catch.h"
#include "harness/leak_check.h"
#include "harness/sweep.h"
#include "harness/test_guards.h"
#include "harness/test_support.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

using course::test::answer_slot;
using course::test::check_input_untouched;
using course::test::got_text;
using course::test::guard_elements;
using course::test::guard_hint;
using course::test::guarded;
using course::test::guarded_input;
using course::test::random_ints;
using reduction::host_sum;
using reduction::wrap32;

namespace {

constexpr int lo = -1000, hi = 1000;
constexpr int sum_guard = 0x3fffffff;  // course::test::input_guard_value<int>()
constexpr std::size_t big = (std::size_t(1) << 24) + 7;

const reduction::stage &stage_under_test() {
  return course::test::stage_under_test<reduction::stage>();
}

const std::vector<std::size_t> &awkward_sizes() {
  static const std::vector<std::size_t> sizes = {0, 1, 31, 33, 1000003, big};
  return sizes;
}

// Every block size the stage accepts out of the powers of two 1..1024 and a few that are not.
std::vector<int> block_sizes_of(const reduction::stage &s) {
  std::vector<int> out;
  for (int t : {1, 2, 4, 8, 16, 32, 33, 64, 96, 100, 128, 256, 512, 1000, 1024})
    if (reduction::supports(s, t)) out.push_back(t);
  return out;
}

// The sweep's block sizes: every one the stage accepts if they are powers of two or multiples of
// 32; for a stage that takes any size, the powers of two and a spread of others (more are drawn
// at random during the sweep).
std::vector<int> sweep_block_sizes(const reduction::stage &s) {
  std::vector<int> out;
  for (int t = 1; t <= 1024; ++t) {
    const bool listed = (t & (t - 1)) == 0 || t % 32 == 0 || t == 3 || t == 7 || t == 33 ||
                        t == 100 || t == 255 || t == 1000 || t == 1023;
    if (listed && reduction::supports(s, t)) out.push_back(t);
  }
  return out;
}

// Where the input sits and which stream the call goes to.
struct placement {
  std::size_t offset = 0;  // ints into the input's allocation (1..3: not 16-byte aligned)
  cudaStream_t stream = nullptr;
};

std::string describe_config(std::size_t n, const reduction::config &cfg, const placement &at = {}) {
  return "n=" + std::to_string(n) + " threads=" + std::to_string(cfg.threads) +
         " blocks=" + (cfg.blocks ? std::to_string(cfg.blocks) : std::string("resident")) +
         (at.offset ? " input offset=" + std::to_string(at.offset) + " ints" : "") +
         (at.stream ? " (non-blocking stream)" : "");
}

int reference_sum(const std::vector<int> &h) {
  return wrap32(host_sum<long long>(h.size(), [&](std::size_t i) { return (long long)h[i]; }));
}

// Sums n fresh random ints, placed as `at`, with one call of the stage.
void check_reduce(std::size_t n, const reduction::config &cfg, const placement &at,
                  reduction::workspace &ws) {
  const auto &stage = stage_under_test();
  const std::uint64_t seed = course::fresh_seed();
  INFO("seed " << seed);
  const std::vector<int> h = random_ints(n, seed, lo, hi);
  const auto in = guarded_input(h, at.offset, sum_guard);
  answer_slot<int> answer;
  stage.reduce(answer.get(), in.get(), n, cfg, ws, at.stream);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::string who = "stage " + stage.info.id + ", " + describe_config(n, cfg, at);
  const int got = answer.read(who);
  const int want = reference_sum(h);
  if (got != want)
    FAIL(who << ": expected " << want << ", got " << got_text(got)
             << guard_hint(got, want, sum_guard));
  check_input_untouched(who, in, h);
  SUCCEED();  // one assertion per checked call, so the summary counts them
}
void check_reduce(std::size_t n, const reduction::config &cfg, std::size_t offset = 0) {
  reduction::workspace ws;
  placement at;
  at.offset = offset;
  check_reduce(n, cfg, at, ws);
}

// Stage 07's four typed entry points on fresh random inputs placed as `at`. Ints over most of the
// int range (the sum overflows int for n >= 3, not long long), guarded by int_guard (INT_MAX or
// INT_MIN); min and max also run with the other guard, so a stray read moves one of them either
// way. Floats in [-1, 1), guarded by NaN. `which` picks one entry point (0..3), -1 all four.
//
// Float bound: every float and every square of a float is exact in double, and a chain of k
// double additions is off by at most about k * 2^-53 * sum|x| (the long double references by far
// less). The longest chain here is one thread's grid-stride share plus the folds; it stays below
// 2^19 additions even with 1-thread blocks on a small GPU, so |got - want| <= 1e-10 * sum|x| (for
// the sum of squares: 1e-10 * the sum of squares).
void check_typed(std::size_t n, const reduction::config &cfg, const placement &at,
                 reduction::workspace &ws, int int_guard, int which = -1) {
  const auto &stage = stage_under_test();
  const auto &typed = *stage.typed;
  const std::string who = "stage " + stage.info.id + ", " + describe_config(n, cfg, at);
  const std::uint64_t seed = course::fresh_seed();
  INFO(who << ", seed " << seed);

  if (which < 0 || which == 0 || which == 3) {
    const int big_int = 1 << 30;
    const std::vector<int> h = random_ints(n, seed, -big_int, big_int);
    const auto ints = guarded_input(h, at.offset, int_guard);
    const std::string guard_text =
        int_guard == INT_MAX ? " (input guard INT_MAX)" : " (input guard INT_MIN)";
    if (which < 0 || which == 0) {
      answer_slot<long long> sum;
      typed.sum_ll(sum.get(), ints.get(), n, cfg, ws, at.stream);
      CUDA_CHECK(cudaDeviceSynchronize());
      const long long want = host_sum<long long>(n, [&](std::size_t i) { return (long long)h[i]; });
      const long long got = sum.read(who);
      if (got != want)
        FAIL(who << guard_text << ": int -> long long: expected " << want << ", got " << got);
      check_input_untouched(who + ", int -> long long", ints, h);
      SUCCEED();
    }
    if (which < 0 || which == 3) {
      reduction::int_range want{INT_MAX, INT_MIN};
      for (int x : h) {
        want.min = std::min(want.min, x);
        want.max = std::max(want.max, x);
      }
      // This input's guard, then the other one.
      const int other_guard = int_guard == INT_MAX ? INT_MIN : INT_MAX;
      const auto other = guarded_input(h, at.offset, other_guard);
      for (const guarded<int> *in : {&ints, &other}) {
        answer_slot<reduction::int_range> range;
        typed.min_max(range.get(), in->get(), n, cfg, ws, at.stream);
        CUDA_CHECK(cudaDeviceSynchronize());
        const auto got = range.read(who);
        const bool max_guard = (in == &ints) == (int_guard == INT_MAX);
        if (got.min != want.min || got.max != want.max)
          FAIL(who << (max_guard ? " (input guard INT_MAX)" : " (input guard INT_MIN)")
                   << ": min/max: expected [" << want.min << ", " << want.max << "], got ["
                   << got.min << ", " << got.max << "]");
        check_input_untouched(who + ", min/max", *in, h);
        SUCCEED();
      }
    }
  }

  if (which < 0 || which == 1 || which == 2) {
    const double bound = 1e-10;
    std::vector<float> h = course::test::random_floats(n, seed + 1);
    const auto floats = guarded_input(h, at.offset);
    auto x = [&](std::size_t i) { return static_cast<long double>(h[i]); };
    const long double want_sum = host_sum<long double>(n, x);
    const long double want_abs =
        host_sum<long double>(n, [&](std::size_t i) { return std::fabs(x(i)); });
    const long double want_sq =
        host_sum<long double>(n, [&](std::size_t i) { return x(i) * x(i); });
    if (which < 0 || which == 1) {
      answer_slot<double> sum;
      typed.sum_double(sum.get(), floats.get(), n, cfg, ws, at.stream);
      CUDA_CHECK(cudaDeviceSynchronize());
      const double got = sum.read(who);
      if (!course::test::close(got, double(want_sum), double(want_abs), bound))
        FAIL(who << ": float -> double: expected " << double(want_sum) << ", got " << got
                 << " (bound " << bound << " * " << double(want_abs)
                 << "; the input's guards are NaN)");
      check_input_untouched(who + ", float -> double", floats, h);
      SUCCEED();
    }
    if (which < 0 || which == 2) {
      answer_slot<reduction::moments> m;
      typed.sum_squares(m.get(), floats.get(), n, cfg, ws, at.stream);
      CUDA_CHECK(cudaDeviceSynchronize());
      const auto got = m.read(who);
      if (!course::test::close(got.sum, double(want_sum), double(want_abs), bound) ||
          !course::test::close(got.sum_squares, double(want_sq), double(want_sq), bound))
        FAIL(who << ": sum and sum of squares: expected {" << double(want_sum) << ", "
                 << double(want_sq) << "}, got {" << got.sum << ", " << got.sum_squares
                 << "} (the input's guards are NaN)");
      check_input_untouched(who + ", sum of squares", floats, h);
      SUCCEED();
    }
  }
}

// Stage 08: the count of in[i] > threshold with one vote, on an input whose guards (INT_MAX) every
// threshold below INT_MAX counts.
void check_count(const guarded<int> &in, const std::vector<int> &h, int threshold, bool block_vote,
                 const reduction::config &cfg, const placement &at, reduction::workspace &ws) {
  const auto &stage = stage_under_test();
  const std::size_t n = h.size();
  const std::string who = "stage " + stage.info.id +
                          (block_vote ? " (__syncthreads_count)" : " (__ballot_sync)") + ", " +
                          describe_config(n, cfg, at) + ", threshold " + std::to_string(threshold);
  answer_slot<unsigned long long> count;
  stage.count(count.get(), in.get(), n, threshold, block_vote, cfg, ws, at.stream);
  CUDA_CHECK(cudaDeviceSynchronize());
  const unsigned long long want = host_sum<unsigned long long>(
      n, [&](std::size_t i) { return h[i] > threshold ? 1ull : 0ull; });
  const unsigned long long got = count.read(who);
  if (got != want)
    FAIL(who << ": expected " << want << ", got " << got
             << (got > want
                     ? " (the input's guards hold INT_MAX, counted by this threshold if read)"
                     : ""));
  check_input_untouched(who, in, h);
  SUCCEED();
}

}  // namespace

TEST_CASE("the sum matches the host reference at awkward sizes and every block size", "[reduce]") {
  const auto &stage = stage_under_test();
  if (!stage.reduce) return;  // stage 08 counts; its own test case below
  for (std::size_t n : awkward_sizes()) {
    for (int threads : block_sizes_of(stage)) {
      reduction::config cfg;
      cfg.threads = threads;
      check_reduce(n, cfg);
    }
  }
}

TEST_CASE("block sizes the stage does not handle are refused, not miscomputed", "[reduce]") {
  const auto &stage = stage_under_test();
  for (int threads : {0, 3, 33, 100, 1000, 1025, 2048}) {
    if (reduction::supports(stage, threads)) continue;
    reduction::config cfg;
    cfg.threads = threads;
    course::device_buffer<int> in(64);
    course::device_buffer<int> a(1);
    course::device_buffer<unsigned long long> c(1);
    reduction::workspace ws;
    INFO("stage " << stage.info.id << ", " << threads << " threads per block");
    if (stage.reduce)
      CHECK_THROWS_AS(stage.reduce(a.get(), in.get(), 64, cfg, ws, nullptr), std::invalid_argument);
    if (stage.count)
      CHECK_THROWS_AS(stage.count(c.get(), in.get(), 64, 0, false, cfg, ws, nullptr),
                      std::invalid_argument);
  }
}

TEST_CASE("the sum is block-agnostic: a tiny grid strides over everything", "[reduce]") {
  if (!stage_under_test().reduce) return;
  for (int blocks : {1, 7}) {
    reduction::config cfg;
    cfg.blocks = blocks;
    check_reduce(1000003, cfg);
  }
}

TEST_CASE("the smallest grids: one, two and three blocks, as the stage sizes them and as asked for",
          "[reduce]") {
  // A single-pass stage treats a grid of one block apart: stage 10 stores the total and skips the
  // memset, while from two blocks on each block adds into an answer zeroed first; a two-pass stage
  // reduces two partials instead of one. Two blocks is the first grid on the other side: sizes just
  // past one block's share, with the grid the stage chooses (stage 10 sizes it at 16 ints per
  // thread, so 16t + 1 .. 32t give it two blocks of t threads; the others size it at one int per
  // thread: two blocks at t + 1 .. 2t), and the grid set to 1, 2 and 3 blocks. Up to 16t ints
  // stage 10 runs one block cut to the fewest threads that take n at 16 ints each: 8t + 1 .. 16t
  // keep all t. The answer slot starts as poison (-1), so a grid of several blocks that adds into
  // it unzeroed is off by one.
  const auto &stage = stage_under_test();
  if (!stage.reduce) return;
  for (int threads : block_sizes_of(stage)) {
    const std::size_t t = std::size_t(threads);
    for (std::size_t n : {t + 1, 2 * t, 2 * t + 1, 8 * t + 1, 16 * t, 16 * t + 1, 32 * t - 1,
                          32 * t, 32 * t + 1, 48 * t + 5}) {
      reduction::config cfg;
      cfg.threads = threads;
      check_reduce(n, cfg);
    }
    for (int blocks : {1, 2, 3}) {
      reduction::config cfg;
      cfg.threads = threads;
      cfg.blocks = blocks;
      for (std::size_t n : {std::size_t(1), 16 * t + 1, std::size_t(100003)}) check_reduce(n, cfg);
    }
  }
}

TEST_CASE("the sum of an input that does not start on a 16-byte boundary", "[reduce]") {
  if (!stage_under_test().reduce) return;
  for (std::size_t offset : {1, 2, 3}) {
    for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(2), std::size_t(3),
                          std::size_t(5), std::size_t(33), std::size_t(1000003)}) {
      reduction::config cfg;
      check_reduce(n, cfg, offset);
    }
  }
}

TEST_CASE("many calls in a row with one workspace, and calls alternating between streams",
          "[reduce][repeat]") {
  const auto &stage = stage_under_test();
  if (!stage.reduce) return;
  const std::size_t n = 100003;
  const std::uint64_t seed = course::fresh_seed();
  // Two different inputs, so an answer left over from the previous call is wrong too.
  const std::vector<int> h[2] = {random_ints(n, seed, lo, hi), random_ints(n, seed + 1, lo, hi)};
  const guarded<int> in[2] = {guarded_input(h[0], 0, sum_guard), guarded_input(h[1], 0, sum_guard)};
  const int want[2] = {reference_sum(h[0]), reference_sum(h[1])};
  INFO("stage " << stage.info.id << ", seed " << seed);
  const int calls = 40;
  std::vector<int> got(calls);
  course::device_buffer<int> answers(calls);
  auto check_all = [&](const char *how) {
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(got.data(), answers.get(), calls * sizeof(int), cudaMemcpyDeviceToHost));
    for (int k = 0; k < calls; ++k)
      if (got[k] != want[k % 2])
        FAIL(how << ": call " << k << " of " << calls << ": expected " << want[k % 2] << ", got "
                 << got_text(got[k]) << guard_hint(got[k], want[k % 2], sum_guard));
    for (int k = 0; k < 2; ++k) check_input_untouched(how, in[k], h[k]);
    SUCCEED();
  };
  reduction::config cfg;

  SECTION("one workspace, one stream, back to back") {
    course::test::poison_device(answers.get(), calls);
    reduction::workspace ws;
    for (int k = 0; k < calls; ++k)
      stage.reduce(answers.get() + k, in[k % 2].get(), n, cfg, ws, nullptr);
    check_all("one stream");
  }
  SECTION("two streams, a workspace each, calls alternating without waiting") {
    course::test::poison_device(answers.get(), calls);
    CUDA_CHECK(cudaDeviceSynchronize());
    course::stream streams[2];
    reduction::workspace ws[2];
    for (int k = 0; k < calls; ++k)
      stage.reduce(answers.get() + k, in[k % 2].get(), n, cfg, ws[k % 2], streams[k % 2]);
    check_all("two streams");
  }
  SECTION("one workspace handed from stream to stream, each call after the previous one") {
    course::test::poison_device(answers.get(), calls);
    CUDA_CHECK(cudaDeviceSynchronize());
    course::stream streams[3];
    course::event done;
    reduction::workspace ws;
    for (int k = 0; k < calls; ++k) {
      cudaStream_t s = streams[k % 3];
      if (k) CUDA_CHECK(cudaStreamWaitEvent(s, done, 0));
      stage.reduce(answers.get() + k, in[k % 2].get(), n, cfg, ws, s);
      CUDA_CHECK(cudaEventRecord(done, s));
    }
    check_all("streams in turn");
  }
}

TEST_CASE("the sum past 2^31 elements (64-bit indexing)", "[reduce][large]") {
  // Generated on the device and checked against random_int(seed, i) on the host: no host copy of
  // the 8.6 GB input. The guard zone after it holds the guard value as everywhere else.
  const auto &stage = stage_under_test();
  const std::size_t n = (std::size_t(1) << 31) + 17;
  const std::size_t needed = (n + guard_elements) * sizeof(int) + (std::size_t(1) << 30);
  if (!course::test::has_free_device_memory(needed, "n=2^31+17")) return;
  const std::uint64_t seed = course::fresh_seed();
  INFO("seed " << seed);
  course::device_buffer<int> in(n + guard_elements);
  course::fill_random_device(in.get(), n, seed, lo, hi);
  course::test::copy_to_device(
      in.get() + n, std::vector<int>(guard_elements, stage.reduce ? sum_guard : INT_MAX));
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::string who = "stage " + stage.info.id + ", n=2^31+17";
  reduction::workspace ws;
  if (stage.reduce) {
    answer_slot<int> answer;
    stage.reduce(answer.get(), in.get(), n, reduction::config{}, ws, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    const int want = wrap32(host_sum<long long>(
        n, [&](std::size_t i) { return (long long)course::random_int(seed, i, lo, hi); }));
    const int got = answer.read(who);
    if (got != want)
      FAIL(who << ": expected " << want << ", got " << got_text(got)
               << guard_hint(got, want, sum_guard));
    SUCCEED();
    return;
  }
  // stage 08: count the positive elements instead
  answer_slot<unsigned long long> count;
  stage.count(count.get(), in.get(), n, 0, false, reduction::config{}, ws, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const unsigned long long want = host_sum<unsigned long long>(
      n, [&](std::size_t i) { return course::random_int(seed, i, lo, hi) > 0 ? 1ull : 0ull; });
  CHECK(count.read(who) == want);
}

TEST_CASE("a stage allocates nothing it does not free", "[reduce][memory]") {
  // The workspace grows on the first call of each kind; later calls of the same size allocate
  // nothing, and whatever a call allocates for itself it frees. Counted in this process only
  // (harness/alloc_tracker.h), so other programs on the GPU do not matter.
  const auto &stage = stage_under_test();
  const std::size_t n = 1 << 20;
  course::device_buffer<int> in(n);
  course::device_buffer<float> floats(n);
  course::device_buffer<unsigned long long> out(
      2);  // room for every answer type (16 bytes at most)
  course::fill_random_device(in.get(), n, 5, lo, hi);
  course::fill_random_device(floats.get(), n, 6);
  reduction::workspace ws;
  auto call = [&] {
    if (stage.reduce)
      stage.reduce(reinterpret_cast<int *>(out.get()), in.get(), n, {}, ws, nullptr);
    if (stage.count) stage.count(out.get(), in.get(), n, 0, false, {}, ws, nullptr);
    if (stage.count) stage.count(out.get(), in.get(), n, 0, true, {}, ws, nullptr);
    if (stage.typed) {
      stage.typed->sum_ll(reinterpret_cast<long long *>(out.get()), in.get(), n, {}, ws, nullptr);
      stage.typed->sum_double(reinterpret_cast<double *>(out.get()), floats.get(), n, {}, ws,
                              nullptr);
      stage.typed->sum_squares(reinterpret_cast<reduction::moments *>(out.get()), floats.get(), n,
                               {}, ws, nullptr);
      stage.typed->min_max(reinterpret_cast<reduction::int_range *>(out.get()), in.get(), n, {}, ws,
                           nullptr);
    }
  };
  course::test::check_no_net_allocations("stage " + stage.info.id, call);
}

// ---- stage 07: other types and operators -----------------------------------------------------
TEST_CASE("int -> long long, float -> double, sum and sum of squares, min and max", "[typed]") {
  const auto &stage = stage_under_test();
  if (!stage.typed) return;  // only stage 07 has these entry points
  int call = 0;
  for (std::size_t n : awkward_sizes()) {
    for (int threads : {1, 32, 256, 1024}) {
      reduction::config cfg;
      cfg.threads = threads;
      reduction::workspace ws;
      check_typed(n, cfg, placement{}, ws, call++ % 2 ? INT_MIN : INT_MAX);
    }
  }
  // Misaligned inputs.
  reduction::workspace ws;
  for (std::size_t offset : {1, 3}) {
    placement at;
    at.offset = offset;
    check_typed(1000003, reduction::config{}, at, ws, offset == 1 ? INT_MAX : INT_MIN);
  }
}

// ---- stage 08: counting a predicate
// --------------------------------------------------------------
TEST_CASE("the count of elements above a threshold: all, none, and random thresholds", "[count]") {
  const auto &stage = stage_under_test();
  if (!stage.count) return;  // only stage 08 counts
  reduction::workspace ws;
  for (bool block_vote : {false, true}) {
    for (std::size_t n : awkward_sizes()) {
      for (int threads : block_sizes_of(stage)) {
        const std::uint64_t seed = course::fresh_seed();
        INFO("seed " << seed);
        const std::vector<int> h = random_ints(n, seed, lo, hi);
        const auto in = guarded_input(h, 0, INT_MAX);
        const int random_threshold = course::random_int(seed, ~0ull, lo, hi);
        reduction::config cfg;
        cfg.threads = threads;
        for (int threshold : {lo - 1, hi, random_threshold})
          check_count(in, h, threshold, block_vote, cfg, placement{}, ws);
      }
    }
  }
  // Misaligned inputs, and a threshold that only the guard value exceeds.
  for (std::size_t offset : {1, 2, 3}) {
    placement at;
    at.offset = offset;
    const std::vector<int> h = random_ints(100003, course::fresh_seed(), lo, hi);
    const auto in = guarded_input(h, at.offset, INT_MAX);
    for (bool block_vote : {false, true})
      for (int threshold : {lo - 1, INT_MAX - 1})
        check_count(in, h, threshold, block_vote, reduction::config{}, at, ws);
  }
}

// ---- the seeded random sweep -----------------------------------------------------------------
// Sizes at the warp, block and tile boundaries of the drawn block size (stage 10 reads 16 ints
// per thread per step), primes, 0 and 1, and two above 2^24; every block size the stage accepts,
// round robin (and, for stage 06, random ones too); grids of resident size, 1, 7 or a random few
// blocks; the input offset by 0..3 ints; a quarter of the calls on a non-blocking stream; one
// workspace for the whole sweep. Stage 07 runs one of its typed entry points per case as well, and
// stage 08 counts with both votes at a drawn threshold. A failure names the case; the test main
// prints the replay line.
TEST_CASE("seeded random sweep over sizes, block sizes, grids and alignments", "[sweep]") {
  const auto &stage = stage_under_test();
  course::test::sweep_rng rng(course::fresh_seed());
  INFO("sweep seed " << rng.seed());
  const std::vector<int> threads_list = sweep_block_sizes(stage);
  const std::size_t max_n = 3000000;
  reduction::workspace ws;
  course::stream side;
  const int cases = 96;
  std::size_t next = 0;  // round robin over threads_list
  for (int c = 0; c < cases; ++c) {
    reduction::config cfg;
    if (stage.sizes == reduction::block_sizes::any && c % 4 == 3)
      cfg.threads = int(rng.between(1, 1024));
    else cfg.threads = threads_list[next++ % threads_list.size()];
    const std::size_t t = std::size_t(cfg.threads);
    const std::vector<std::size_t> boundaries = {32,    64, 128,   256,    1024,  4096,
                                                 16384, t,  4 * t, 16 * t, 64 * t};
    std::size_t n = rng.awkward_size(boundaries, max_n);
    if (c == 17 || c == 71) n = (std::size_t(1) << 24) + rng.between(1, 1 << 20);
    const int blocks = rng.pick({0, 0, 0, 1, 7, int(rng.between(2, 300))});
    // A grid small enough to leave each thread more than 2^18 elements would only be slow.
    if (std::size_t(blocks) * t * (std::size_t(1) << 18) >= n) cfg.blocks = blocks;
    placement at;
    at.offset = rng.below(4);
    at.stream = rng.chance(0.25) ? cudaStream_t(side) : nullptr;
    INFO("case " << c << ": " << describe_config(n, cfg, at));
    if (stage.reduce) check_reduce(n, cfg, at, ws);
    if (stage.typed) check_typed(n, cfg, at, ws, c % 2 ? INT_MIN : INT_MAX, c % 4);
    if (stage.count) {
      const std::uint64_t seed = course::fresh_seed();
      INFO("seed " << seed);
      const std::vector<int> h = random_ints(n, seed, lo, hi);
      const auto in = guarded_input(h, at.offset, INT_MAX);
      const int threshold =
          rng.pick({lo - 1, hi, int(rng.between(0, hi - lo)) + lo, INT_MIN, INT_MAX - 1});
      for (bool block_vote : {false, true}) check_count(in, h, threshold, block_vote, cfg, at, ws);
    }
  }
}
