// SPDX-License-Identifier: BSD-3-Clause
// Tests of every reduction stage. Each test program is built with one stage; every check runs on
// fresh random inputs (the seed is printed on failure; COURSE_SEED replays).
//
// Integer sums: inputs are random ints in [-1000, 1000] (negative values included). The GPU adds
// in 32-bit two's complement, so its answer is the true sum mod 2^32 whatever the order; the host
// reference is the exact sum in 64 bits, reduced mod 2^32 the same way, and the two must be equal.
// (With inputs this small the true sum of random data stays far inside int range in practice:
// about 577 * sqrt(n), so no partial sum on the GPU overflows either.)
#include "host_reference.h"
#include "reduction.h"

#include "common/device.h"
#include "common/random.h"
#include "common/random_fill.h"
#include "harness/catch.h"
#include "harness/test_support.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

using course::test::guard_elements;
using reduction::host_sum;
using reduction::wrap32;

namespace {

constexpr int lo = -1000, hi = 1000;

const reduction::stage &stage_under_test() {
  auto &stages = course::registered<reduction::stage>();
  if (stages.size() != 1) throw std::logic_error("a reduction test program links exactly one stage");
  return stages.front();
}

const std::vector<std::size_t> &awkward_sizes() {
  static const std::vector<std::size_t> sizes = {0, 1, 31, 33, 1000003, (std::size_t(1) << 24) + 7};
  return sizes;
}

// Every block size the stage accepts out of the powers of two 1..1024 and a few that are not.
std::vector<int> block_sizes_of(const reduction::stage &s) {
  std::vector<int> out;
  for (int t : {1, 2, 4, 8, 16, 32, 33, 64, 96, 100, 128, 256, 512, 1000, 1024})
    if (reduction::supports(s, t)) out.push_back(t);
  return out;
}

std::string describe_config(std::size_t n, const reduction::config &cfg, std::size_t offset = 0) {
  return "n=" + std::to_string(n) + " threads=" + std::to_string(cfg.threads) + " blocks=" +
         (cfg.blocks ? std::to_string(cfg.blocks) : std::string("resident")) +
         (offset ? " offset=" + std::to_string(offset) + " ints" : "");
}

int reference_sum(std::uint64_t seed, std::size_t offset, std::size_t n) {
  return wrap32(host_sum<long long>(n, [&](std::size_t i) { return course::random_int(seed, offset + i, lo, hi); }));
}

// A device answer slot followed by a guard zone, poisoned (0xFF bytes: the int -1).
template <class T>
struct answer_slot {
  course::device_buffer<T> buf{1 + guard_elements};
  answer_slot() { course::test::poison_device(buf.get(), buf.size()); }
  T *get() const { return buf.get(); }
  // The answer, after checking that nothing past it was written.
  T read(const std::string &who) const {
    std::vector<T> h(buf.size());
    CUDA_CHECK(cudaMemcpy(h.data(), buf.get(), buf.bytes(), cudaMemcpyDeviceToHost));
    std::vector<unsigned char> poison(sizeof(T), course::test::poison_byte);
    for (std::size_t i = 1; i < h.size(); ++i)
      if (std::memcmp(&h[i], poison.data(), sizeof(T)) != 0)
        FAIL(who << ": wrote past the answer, at element " << i << " of the guard zone");
    return h[0];
  }
};

std::string got_text(int got) { return got == -1 ? "-1 (the poison: never written?)" : std::to_string(got); }

// Sums n fresh random ints at `offset` ints into a buffer with one call of the stage.
void check_reduce(std::size_t n, const reduction::config &cfg, std::size_t offset = 0) {
  const auto &stage = stage_under_test();
  const std::uint64_t seed = course::fresh_seed();
  course::device_buffer<int> in(offset + n + 1);
  course::fill_random_device(in.get(), offset + n + 1, seed, lo, hi);  // one element past the end too: it must not count
  answer_slot<int> answer;
  reduction::workspace ws;
  stage.reduce(answer.get(), in.get() + offset, n, cfg, ws, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::string who = "stage " + stage.info.id + ", " + describe_config(n, cfg, offset);
  const int got = answer.read(who);
  const int want = reference_sum(seed, offset, n);
  INFO("seed " << seed << " (COURSE_SEED replays the run)");
  if (got != want) FAIL(who << ": expected " << want << ", got " << got_text(got));
  SUCCEED();  // one assertion per checked call, so the summary counts them
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
    if (stage.reduce) CHECK_THROWS_AS(stage.reduce(a.get(), in.get(), 64, cfg, ws, nullptr), std::invalid_argument);
    if (stage.count)
      CHECK_THROWS_AS(stage.count(c.get(), in.get(), 64, 0, false, cfg, ws, nullptr), std::invalid_argument);
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

TEST_CASE("the sum of an input that does not start on a 16-byte boundary", "[reduce]") {
  if (!stage_under_test().reduce) return;
  for (std::size_t offset : {1, 2, 3}) {
    for (std::size_t n : {std::size_t(1), std::size_t(2), std::size_t(5), std::size_t(33), std::size_t(1000003)}) {
      reduction::config cfg;
      check_reduce(n, cfg, offset);
    }
  }
}

TEST_CASE("many calls in a row with one workspace, and calls alternating between streams", "[reduce][repeat]") {
  const auto &stage = stage_under_test();
  if (!stage.reduce) return;
  const std::size_t n = 100003;
  const std::uint64_t seed = course::fresh_seed();
  // Two different inputs, so an answer left over from the previous call is wrong too.
  course::device_buffer<int> in0(n), in1(n);
  course::fill_random_device(in0.get(), n, seed, lo, hi);
  course::fill_random_device(in1.get(), n, seed + 1, lo, hi);
  const int want[2] = {reference_sum(seed, 0, n), reference_sum(seed + 1, 0, n)};
  const int *inputs[2] = {in0.get(), in1.get()};
  INFO("stage " << stage.info.id << ", seed " << seed << " (COURSE_SEED replays the run)");
  const int calls = 40;
  std::vector<int> got(calls);
  course::device_buffer<int> answers(calls);
  auto check_all = [&](const char *how) {
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(got.data(), answers.get(), calls * sizeof(int), cudaMemcpyDeviceToHost));
    for (int k = 0; k < calls; ++k)
      if (got[k] != want[k % 2]) FAIL(how << ": call " << k << " of " << calls << ": expected " << want[k % 2] << ", got " << got_text(got[k]));
    SUCCEED();
  };
  reduction::config cfg;

  SECTION("one workspace, one stream, back to back") {
    course::test::poison_device(answers.get(), calls);
    reduction::workspace ws;
    for (int k = 0; k < calls; ++k) stage.reduce(answers.get() + k, inputs[k % 2], n, cfg, ws, nullptr);
    check_all("one stream");
  }
  SECTION("two streams, a workspace each, calls alternating without waiting") {
    course::test::poison_device(answers.get(), calls);
    CUDA_CHECK(cudaDeviceSynchronize());
    course::stream streams[2];
    reduction::workspace ws[2];
    for (int k = 0; k < calls; ++k) stage.reduce(answers.get() + k, inputs[k % 2], n, cfg, ws[k % 2], streams[k % 2]);
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
      stage.reduce(answers.get() + k, inputs[k % 2], n, cfg, ws, s);
      CUDA_CHECK(cudaEventRecord(done, s));
    }
    check_all("streams in turn");
  }
}

TEST_CASE("the sum past 2^31 elements (64-bit indexing)", "[reduce][large]") {
  const auto &stage = stage_under_test();
  const std::size_t n = (std::size_t(1) << 31) + 17;
  std::size_t free_bytes = 0, total_bytes = 0;
  course::device_memory(free_bytes, total_bytes);
  const std::size_t needed = (n + 1) * sizeof(int) + (std::size_t(1) << 30);
  if (free_bytes < needed) {
    WARN("skipped n=2^31+17: needs " << needed / (1u << 20) << " MiB of free device memory, " << free_bytes / (1u << 20)
                                     << " MiB free");
    return;
  }
  if (stage.reduce) {
    check_reduce(n, reduction::config{});
    return;
  }
  // stage 08: count the positive elements instead
  const std::uint64_t seed = course::fresh_seed();
  course::device_buffer<int> in(n);
  course::fill_random_device(in.get(), n, seed, lo, hi);
  answer_slot<unsigned long long> count;
  reduction::workspace ws;
  stage.count(count.get(), in.get(), n, 0, false, reduction::config{}, ws, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const unsigned long long want =
      host_sum<unsigned long long>(n, [&](std::size_t i) { return course::random_int(seed, i, lo, hi) > 0 ? 1ull : 0ull; });
  INFO("seed " << seed);
  CHECK(count.read("stage " + stage.info.id + ", n=2^31+17") == want);
}

TEST_CASE("a stage allocates nothing it does not free", "[reduce][memory]") {
  const auto &stage = stage_under_test();
  const std::size_t n = 1 << 20;
  course::device_buffer<int> in(n);
  course::device_buffer<unsigned long long> out(1);
  course::fill_random_device(in.get(), n, 5, lo, hi);
  reduction::workspace ws;
  auto call = [&] {
    if (stage.reduce) stage.reduce(reinterpret_cast<int *>(out.get()), in.get(), n, {}, ws, nullptr);
    else stage.count(out.get(), in.get(), n, 0, false, {}, ws, nullptr);
  };
  call();  // the workspace grows to its size on the first call
  std::size_t before = 0, after = 0, total = 0;
  CUDA_CHECK(cudaDeviceSynchronize());
  course::device_memory(before, total);
  for (int i = 0; i < 3; ++i) call();
  CUDA_CHECK(cudaDeviceSynchronize());
  course::device_memory(after, total);
  CHECK(after == before);
}

// ---- stage 07: other types and operators -----------------------------------------------------
TEST_CASE("int -> long long, float -> double, sum and sum of squares, min and max", "[typed]") {
  const auto &stage = stage_under_test();
  if (!stage.typed) return;  // only stage 07 has these entry points
  const auto &typed = *stage.typed;
  for (std::size_t n : awkward_sizes()) {
    for (int threads : {1, 32, 256, 1024}) {
      reduction::config cfg;
      cfg.threads = threads;
      const std::string who = "stage " + stage.info.id + ", " + describe_config(n, cfg);
      const std::uint64_t seed = course::fresh_seed();
      INFO(who << ", seed " << seed << " (COURSE_SEED replays the run)");
      reduction::workspace ws;

      // Ints over most of the int range: the sum overflows int for n >= 3, not long long.
      const int big = 1 << 30;
      course::device_buffer<int> ints(n + 1);
      course::fill_random_device(ints.get(), n + 1, seed, -big, big);
      {
        answer_slot<long long> sum;
        typed.sum_ll(sum.get(), ints.get(), n, cfg, ws, nullptr);
        const long long want = host_sum<long long>(n, [&](std::size_t i) { return (long long)course::random_int(seed, i, -big, big); });
        const long long got = sum.read(who);
        if (got != want) FAIL("int -> long long: expected " << want << ", got " << got);
        SUCCEED();
      }
      {
        answer_slot<reduction::int_range> range;
        typed.min_max(range.get(), ints.get(), n, cfg, ws, nullptr);
        reduction::int_range want{INT_MAX, INT_MIN};
        for (std::size_t i = 0; i < n; ++i) {
          const int x = course::random_int(seed, i, -big, big);
          want.min = std::min(want.min, x);
          want.max = std::max(want.max, x);
        }
        const auto got = range.read(who);
        if (got.min != want.min || got.max != want.max)
          FAIL("min/max: expected [" << want.min << ", " << want.max << "], got [" << got.min << ", " << got.max << "]");
        SUCCEED();
      }

      // Floats in [-1, 1). Bound: every float and every square of a float is exact in double, and
      // a chain of k double additions is off by at most about k * 2^-53 * sum|x| (the long double
      // references by far less). The longest chain here is one thread's grid-stride share plus
      // the folds; it stays below 2^19 additions even with 1-thread blocks on a small GPU, so
      // |got - want| <= 1e-10 * sum|x| (for the sum of squares: 1e-10 * the sum of squares).
      const double bound = 1e-10;
      course::device_buffer<float> floats(n + 1);
      course::fill_random_device(floats.get(), n + 1, seed + 1);
      auto x = [&](std::size_t i) { return static_cast<long double>(course::random_float(seed + 1, i)); };
      const long double want_sum = host_sum<long double>(n, x);
      const long double want_abs = host_sum<long double>(n, [&](std::size_t i) { return std::fabs(x(i)); });
      const long double want_sq = host_sum<long double>(n, [&](std::size_t i) { return x(i) * x(i); });
      {
        answer_slot<double> sum;
        typed.sum_double(sum.get(), floats.get(), n, cfg, ws, nullptr);
        const double got = sum.read(who);
        if (!course::test::close(got, double(want_sum), double(want_abs), bound))
          FAIL("float -> double: expected " << double(want_sum) << ", got " << got << " (bound " << bound << " * " << double(want_abs) << ")");
        SUCCEED();
      }
      {
        answer_slot<reduction::moments> m;
        typed.sum_squares(m.get(), floats.get(), n, cfg, ws, nullptr);
        const auto got = m.read(who);
        if (!course::test::close(got.sum, double(want_sum), double(want_abs), bound) ||
            !course::test::close(got.sum_squares, double(want_sq), double(want_sq), bound))
          FAIL("sum and sum of squares: expected {" << double(want_sum) << ", " << double(want_sq) << "}, got {" << got.sum
                                                    << ", " << got.sum_squares << "}");
        SUCCEED();
      }
    }
  }
}

// ---- stage 08: counting a predicate --------------------------------------------------------------
TEST_CASE("the count of elements above a threshold: all, none, and random thresholds", "[count]") {
  const auto &stage = stage_under_test();
  if (!stage.count) return;  // only stage 08 counts
  for (bool block_vote : {false, true}) {
    for (std::size_t n : awkward_sizes()) {
      for (int threads : block_sizes_of(stage)) {
        const std::uint64_t seed = course::fresh_seed();
        course::device_buffer<int> in(n + 1);
        course::fill_random_device(in.get(), n + 1, seed, lo, hi);
        const int random_threshold = course::random_int(seed, ~0ull, lo, hi);
        for (int threshold : {lo - 1, hi, random_threshold}) {
          reduction::config cfg;
          cfg.threads = threads;
          const std::string who = "stage " + stage.info.id + (block_vote ? " (__syncthreads_count)" : " (__ballot_sync)") +
                                  ", " + describe_config(n, cfg) + ", threshold " + std::to_string(threshold);
          INFO("seed " << seed << " (COURSE_SEED replays the run)");
          answer_slot<unsigned long long> count;
          reduction::workspace ws;
          stage.count(count.get(), in.get(), n, threshold, block_vote, cfg, ws, nullptr);
          CUDA_CHECK(cudaDeviceSynchronize());
          const unsigned long long want = host_sum<unsigned long long>(
              n, [&](std::size_t i) { return course::random_int(seed, i, lo, hi) > threshold ? 1ull : 0ull; });
          const unsigned long long got = count.read(who);
          if (got != want) FAIL(who << ": expected " << want << ", got " << got);
          SUCCEED();
        }
      }
    }
  }
}
