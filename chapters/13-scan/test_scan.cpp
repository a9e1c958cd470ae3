// SPDX-License-Identifier: BSD-3-Clause
// Tests of every scan stage. Each test program is built with one stage; every check runs on fresh
// random inputs (the seed is printed on failure; COURSE_SEED replays).
//
// Ints in [-1000, 1000] (negatives included), and one test over [-2^30, 2^30] whose sums wrap:
// the GPU adds in 32-bit two's complement, the host reference (host_scan.h) too, so the two must
// be equal element for element whatever order the GPU adds in. Outputs are poisoned first (0xFF
// bytes, the int -1) and followed by a guard zone that must stay poisoned.
//
// Floats: uniform in [-1, 1], against a float64 scan of the same floats. Stated bound:
//   |got[i] - exact[i]| <= 1e-6 * (|x_0| + ... + |x_i|)
// (for exclusive scans too: a stage may compute an exclusive value as inclusive - x_i). Each
// addition rounds by at most 2^-24 of a partial sum, and no partial sum exceeds the sum of the
// magnitudes; the carries of the blocked stages chain at most a few thousand additions, whose
// rounding errors mostly cancel. A lost or doubled element (|x| ~ 0.5) is caught wherever the
// magnitudes so far stay below 5e5, i.e. in the first million or so elements; the int tests
// catch indexing mistakes everywhere.
#include "host_scan.h"
#include "scan.h"

#include "common/random_fill.h"
#include "harness/catch.h"
#include "harness/test_support.h"

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

using course::test::guard_elements;

namespace {

constexpr int lo = -1000, hi = 1000;
constexpr std::size_t big = (std::size_t(1) << 24) + 7;

const scan::stage &stage_under_test() { return course::test::stage_under_test<scan::stage>(); }

const std::vector<std::size_t> &awkward_sizes() {
  // 65536: a whole number of tiles for every block size, so the last tile takes the full-tile path.
  static const std::vector<std::size_t> sizes = {0, 1, 31, 32, 33, 1000, 65536, 1000003};  // and big: [large]
  return sizes;
}
const std::vector<int> &block_sizes() {
  static const std::vector<int> sizes = {32, 64, 128, 256, 512, 1024};
  return sizes;
}

std::string describe(std::size_t n, bool inclusive, bool in_place, const scan::config &cfg) {
  return "n=" + std::to_string(n) + (inclusive ? " inclusive" : " exclusive") + (in_place ? " in place" : "") +
         " threads=" + std::to_string(cfg.threads) +
         (cfg.partials ? " partials=" + std::to_string(cfg.partials) : std::string());
}

// The first n elements of got must equal want; got[n, n + guard) must still be poison.
void check_output(const std::string &who, const std::vector<int> &got, const std::vector<int> &want, std::size_t n) {
  const std::size_t written = course::test::first_written(got, n);
  if (written != got.size()) FAIL(who << ": wrote into the guard zone, at element " << written - n << " past the end");
  const auto r = course::test::check_elements(
      n, [&](std::size_t i) { return got[i]; }, [&](std::size_t i) { return want[i]; },
      [](std::size_t, int g, double w) { return double(g) == w; });
  if (!r.ok()) FAIL(course::test::describe(stage_under_test().info.id, who, n, r));
  SUCCEED();
}

// One call of the stage's scan on fresh random ints in [l, h].
void check_scan(std::size_t n, bool inclusive, bool in_place, const scan::config &cfg, scan::workspace &ws,
                int l = lo, int h = hi) {
  const auto &stage = stage_under_test();
  const std::uint64_t seed = course::fresh_seed();
  INFO("seed " << seed << " (COURSE_SEED replays the run)");
  std::vector<int> in(n);
  course::fill_random_host(in.data(), n, seed, l, h);
  std::vector<int> want(n);
  scan::host_scan(want.data(), in.data(), n, inclusive);

  course::device_buffer<int> d_in(n + guard_elements), d_out(n + guard_elements);
  course::test::poison_device(d_in.get(), d_in.size());
  course::test::poison_device(d_out.get(), d_out.size());
  int *out = in_place ? d_in.get() : d_out.get();
  course::test::copy_to_device(d_in.get(), in);
  stage.scan(out, d_in.get(), n, inclusive, cfg, ws, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::string who = describe(n, inclusive, in_place, cfg);
  check_output(who, course::test::copy_to_host(out, n + guard_elements), want, n);
  if (!in_place) {  // the input is left alone
    const auto after = course::test::copy_to_host(d_in.get(), n);
    if (after != in) FAIL(who << ": the input was modified by an out-of-place scan");
  }
}

// The same on floats: one call of the stage's float scan, checked with the bound above.
void check_scan_float(std::size_t n, bool inclusive, bool in_place, const scan::config &cfg, scan::workspace &ws) {
  const auto &stage = stage_under_test();
  const std::uint64_t seed = course::fresh_seed();
  INFO("seed " << seed << " (COURSE_SEED replays the run)");
  std::vector<float> in(n);
  course::fill_random_host(in.data(), n, seed, -1.0f, 1.0f);
  std::vector<double> want(n), scale(n);
  double sum = 0, magnitude = 0;
  for (std::size_t i = 0; i < n; ++i) {
    magnitude += std::fabs(double(in[i]));
    want[i] = inclusive ? sum + in[i] : sum;
    scale[i] = magnitude;
    sum += in[i];
  }
  course::device_buffer<float> d_in(n + guard_elements), d_out(n + guard_elements);
  course::test::poison_device(d_in.get(), d_in.size());
  course::test::poison_device(d_out.get(), d_out.size());
  float *out = in_place ? d_in.get() : d_out.get();
  course::test::copy_to_device(d_in.get(), in);
  stage.scan_float(out, d_in.get(), n, inclusive, cfg, ws, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::string who = "float " + describe(n, inclusive, in_place, cfg) + ", bound 1e-6 * sum |x|";
  const auto got = course::test::copy_to_host(out, n + guard_elements);
  const std::size_t written = course::test::first_written(got, n);
  if (written != got.size()) FAIL(who << ": wrote into the guard zone, at element " << written - n << " past the end");
  const auto r = course::test::check_elements(
      n, [&](std::size_t i) { return got[i]; }, [&](std::size_t i) { return want[i]; },
      [&](std::size_t i, float g, double w) { return course::test::close(g, w, scale[i], 1e-6); });
  if (!r.ok()) FAIL(course::test::describe(stage_under_test().info.id, who, n, r));
  SUCCEED();
}

}  // namespace

TEST_CASE("float scans match a float64 scan within the stated bound", "[scan][float]") {
  const auto &stage = stage_under_test();
  if (!stage.scan_float) return;
  scan::workspace ws;
  for (std::size_t n : awkward_sizes()) {
    for (int threads : {32, 256, 1024}) {
      scan::config cfg;
      cfg.threads = threads;
      for (bool inclusive : {true, false}) check_scan_float(n, inclusive, false, cfg, ws);
    }
  }
  scan::config cfg;
  for (bool inclusive : {true, false}) check_scan_float(1000003, inclusive, true, cfg, ws);
}

TEST_CASE("arrays that are not 16-byte aligned (the stages' vector loads fall back to scalar ones)", "[scan]") {
  const auto &stage = stage_under_test();
  scan::workspace ws;
  const std::size_t n = 100003;
  for (std::size_t offset : {std::size_t(1), std::size_t(2), std::size_t(3)}) {
    const std::uint64_t seed = course::fresh_seed();
    INFO("seed " << seed << " (COURSE_SEED replays the run), arrays offset by " << offset << " ints");
    std::vector<int> in(n);
    course::fill_random_host(in.data(), n, seed, lo, hi);
    course::device_buffer<int> d_in(n + 4), d_out(n + 4 + guard_elements);
    course::test::poison_device(d_out.get(), d_out.size());
    CUDA_CHECK(cudaMemcpy(d_in.get() + offset, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    scan::config cfg;
    if (stage.scan) {
      std::vector<int> want(n);
      scan::host_scan(want.data(), in.data(), n, true);
      stage.scan(d_out.get() + offset, d_in.get() + offset, n, true, cfg, ws, nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      check_output("misaligned n=" + std::to_string(n), course::test::copy_to_host(d_out.get() + offset, n + guard_elements),
                   want, n);
    }
    if (stage.compact) {
      std::vector<int> want;
      for (int x : in)
        if (scan::keep(scan::predicate::odd, x)) want.push_back(x);
      const std::size_t count = stage.compact(d_out.get() + offset, d_in.get() + offset, n, scan::predicate::odd, cfg,
                                              ws, nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      if (count != want.size()) FAIL("misaligned compact: returned count " << count << ", expected " << want.size());
      check_output("misaligned compact", course::test::copy_to_host(d_out.get() + offset, n + guard_elements), want,
                   count);
    }
  }
}

TEST_CASE("inclusive and exclusive scans match the host at awkward sizes and every block size", "[scan]") {
  const auto &stage = stage_under_test();
  if (!stage.scan) return;  // stage 06 compacts; its own test case below
  scan::workspace ws;
  for (std::size_t n : awkward_sizes()) {
    for (int threads : block_sizes()) {
      scan::config cfg;
      cfg.threads = threads;
      for (bool inclusive : {true, false}) check_scan(n, inclusive, false, cfg, ws);
    }
  }
}

TEST_CASE("scans in place (d_out == d_in)", "[scan]") {
  const auto &stage = stage_under_test();
  if (!stage.scan) return;
  scan::workspace ws;
  for (std::size_t n : {std::size_t(1), std::size_t(33), std::size_t(1000003)}) {
    for (int threads : {32, 256, 1024}) {
      scan::config cfg;
      cfg.threads = threads;
      for (bool inclusive : {true, false}) check_scan(n, inclusive, true, cfg, ws);
    }
  }
}

TEST_CASE("sums that wrap around 2^32 match the host's wrapping scan", "[scan]") {
  if (!stage_under_test().scan) return;
  scan::workspace ws;
  scan::config cfg;
  for (bool inclusive : {true, false}) check_scan(1000003, inclusive, false, cfg, ws, -(1 << 30), 1 << 30);
}

TEST_CASE("two-level stages with few and many partial sums", "[scan]") {
  const auto &stage = stage_under_test();
  if (!stage.scan || !stage.two_level) return;
  scan::workspace ws;
  for (int partials : {1, 7, 1000, 100000}) {
    for (int threads : {32, 256}) {
      scan::config cfg;
      cfg.threads = threads;
      cfg.partials = partials;
      for (bool inclusive : {true, false}) check_scan(1000003, inclusive, false, cfg, ws);
    }
  }
}

TEST_CASE("many calls in a row with one workspace, alternating sizes", "[scan][repeat]") {
  if (!stage_under_test().scan) return;
  scan::workspace ws;
  const std::size_t sizes[] = {1000003, 33, (std::size_t(1) << 20) + 5, 1};
  for (int call = 0; call < 30; ++call) {
    scan::config cfg;
    cfg.threads = call % 3 == 0 ? 128 : 256;
    INFO("call " << call);
    check_scan(sizes[call % 4], call % 2 == 0, false, cfg, ws);
  }
}

TEST_CASE("block sizes the stages do not handle are refused, not miscomputed", "[scan]") {
  const auto &stage = stage_under_test();
  scan::workspace ws;
  course::device_buffer<int> in(64), out(64);
  for (int threads : {0, 16, 31, 33, 100, 1000, 2048}) {
    scan::config cfg;
    cfg.threads = threads;
    INFO("stage " << stage.info.id << ", " << threads << " threads per block");
    if (stage.scan) CHECK_THROWS_AS(stage.scan(out.get(), in.get(), 64, true, cfg, ws, nullptr), std::invalid_argument);
    if (stage.compact)
      CHECK_THROWS_AS(stage.compact(out.get(), in.get(), 64, scan::predicate::odd, cfg, ws, nullptr),
                      std::invalid_argument);
  }
}

TEST_CASE("each warp scan form against the host on 32-element segments", "[warp]") {
  const auto &stage = stage_under_test();
  if (!stage.warp_scan) return;
  for (scan::warp_form form : scan::all_warp_forms) {
    for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(31), std::size_t(32), std::size_t(33),
                          std::size_t(1000003)}) {
      for (bool inclusive : {true, false}) {
        const std::uint64_t seed = course::fresh_seed();
        INFO("seed " << seed << " (COURSE_SEED replays the run)");
        std::vector<int> in(n), want(n);
        course::fill_random_host(in.data(), n, seed, lo, hi);
        for (std::size_t s = 0; s < n; s += 32)
          scan::host_scan(want.data() + s, in.data() + s, std::min<std::size_t>(32, n - s), inclusive);
        course::device_buffer<int> d_in(n + 1), d_out(n + guard_elements);
        course::test::copy_to_device(d_in.get(), in);
        course::test::poison_device(d_out.get(), d_out.size());
        stage.warp_scan(d_out.get(), d_in.get(), n, form, inclusive, nullptr);
        CUDA_CHECK(cudaDeviceSynchronize());
        const std::string who = std::string("warp scan ") + scan::to_string(form) + ", n=" + std::to_string(n) +
                                (inclusive ? " inclusive" : " exclusive");
        check_output(who, course::test::copy_to_host(d_out.get(), n + guard_elements), want, n);
      }
    }
  }
}

namespace {

// One compaction on fresh random ints, checked against the host: the kept elements in order,
// the count, and nothing written after them.
void check_compact(std::size_t n, scan::predicate p, const scan::config &cfg, scan::workspace &ws) {
  const auto &stage = stage_under_test();
  const std::uint64_t seed = course::fresh_seed();
  INFO("seed " << seed << " (COURSE_SEED replays the run)");
  std::vector<int> in(n), want;
  course::fill_random_host(in.data(), n, seed, lo, hi);
  for (int x : in)
    if (scan::keep(p, x)) want.push_back(x);
  course::device_buffer<int> d_in(n + 1), d_out(n + guard_elements);
  course::test::copy_to_device(d_in.get(), in);
  course::test::poison_device(d_out.get(), d_out.size());
  const std::size_t count = stage.compact(d_out.get(), d_in.get(), n, p, cfg, ws, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::string who = std::string("compact ") + scan::to_string(p) + ", n=" + std::to_string(n) +
                          " threads=" + std::to_string(cfg.threads);
  if (count != want.size()) FAIL(who << ": returned count " << count << ", expected " << want.size());
  // Kept elements first; nothing written after them (guard zone starts at the count).
  check_output(who, course::test::copy_to_host(d_out.get(), n + guard_elements), want, count);
}

}  // namespace

TEST_CASE("compaction keeps all, none and some, in order, and returns the count", "[compact]") {
  const auto &stage = stage_under_test();
  if (!stage.compact) return;
  scan::workspace ws;
  const scan::predicate preds[] = {scan::predicate::odd, scan::predicate::all, scan::predicate::none,
                                   scan::predicate::even, scan::predicate::positive};
  for (std::size_t n : awkward_sizes()) {
    for (int threads : block_sizes()) {
      for (scan::predicate p : preds) {
        scan::config cfg;
        cfg.threads = threads;
        if (threads == 64) cfg.partials = 7;
        check_compact(n, p, cfg, ws);
      }
    }
  }
}

// Large sizes, left out of the sanitizer runs (they run kernels 10-100x slower).
TEST_CASE("2^24 + 7 elements: scans, in place, floats, compaction", "[large]") {
  const auto &stage = stage_under_test();
  scan::workspace ws;
  for (int threads : {32, 256, 1024}) {
    scan::config cfg;
    cfg.threads = threads;
    for (bool inclusive : {true, false}) {
      if (stage.scan) check_scan(big, inclusive, false, cfg, ws);
      if (stage.scan && threads == 256) check_scan(big, inclusive, true, cfg, ws);
      if (stage.scan_float && threads == 256) check_scan_float(big, inclusive, false, cfg, ws);
    }
    if (stage.compact && threads != 256) check_compact(big, scan::predicate::odd, cfg, ws);
  }
}
