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

#include "common/random.h"
#include "common/random_fill.h"
#include "harness/catch.h"
#include "harness/leak_check.h"
#include "harness/alloc_tracker.h"
#include "harness/sweep.h"
#include "harness/test_guards.h"
#include "harness/test_support.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iterator>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

constexpr int lo = -1000, hi = 1000;
constexpr std::size_t big = (std::size_t(1) << 24) + 7;

const scan::stage &stage_under_test() { return course::test::stage_under_test<scan::stage>(); }

const std::vector<std::size_t> &awkward_sizes() {
  // 65536: a whole number of tiles for every block size, so the last tile takes the full-tile path.
  // Under a sanitizer the last shrinks (course::test::sanitizer_size), keeping its partial tiles.
  static const std::vector<std::size_t> sizes = {
      0, 1, 31, 32, 33, 1000, 65536, course::test::sanitizer_size(1000003)};  // and big: [large]
  return sizes;
}
const std::vector<int> &block_sizes() {
  static const std::vector<int> sizes = {32, 64, 128, 256, 512, 1024};
  return sizes;
}

// Where the arrays sit: each starts `offset` elements into its allocation (offset 1: 4 bytes off
// a 16-byte boundary), input and output independently; in place, both are the input's.
struct placement {
  bool in_place = false;
  std::size_t in_offset = 0, out_offset = 0;
  cudaStream_t stream = nullptr;
};

std::string describe(std::size_t n, bool inclusive, const placement &at, const scan::config &cfg) {
  std::string s = "n=" + std::to_string(n) + (inclusive ? " inclusive" : " exclusive") +
                  (at.in_place ? " in place" : "") + " threads=" + std::to_string(cfg.threads) +
                  (cfg.partials ? " partials=" + std::to_string(cfg.partials) : std::string());
  if (at.in_offset) s += " input offset " + std::to_string(at.in_offset);
  if (!at.in_place && at.out_offset) s += " output offset " + std::to_string(at.out_offset);
  if (at.stream) s += " (non-blocking stream)";
  return s;
}

// The first n elements of got must equal want.
template <class T, class Ok>
void check_values(const std::string &who, const std::vector<T> &got,
                  const std::vector<double> &want, std::size_t n, Ok ok) {
  const auto r = course::test::check_elements(
      n, [&](std::size_t i) { return got[i]; }, [&](std::size_t i) { return want[i]; }, ok);
  if (!r.ok()) FAIL(course::test::describe(stage_under_test().info.id, who, n, r));
}
void check_output(const std::string &who, const std::vector<int> &got, const std::vector<int> &want,
                  std::size_t n) {
  const auto r = course::test::check_elements(
      n, [&](std::size_t i) { return got[i]; }, [&](std::size_t i) { return want[i]; },
      [](std::size_t, int g, double w) { return double(g) == w; });
  if (!r.ok()) FAIL(course::test::describe(stage_under_test().info.id, who, n, r));
}

// Runs the stage's scan of `in` (int or float) with the input and output placed as `at`: inputs
// guarded by a value that changes the result if read (a large int, NaN), outputs poisoned (0xFF)
// with poisoned guards. Checks the guards and, out of place, that the input is unchanged;
// returns the output.
template <class T>
std::vector<T> run_scan(const std::vector<T> &in, bool inclusive, const placement &at,
                        const scan::config &cfg, scan::workspace &ws, const std::string &who) {
  const auto &stage = stage_under_test();
  const std::size_t n = in.size();
  auto d_in = course::test::guarded_input(in, at.in_offset, course::test::input_guard_value<T>());
  auto d_out = course::test::guarded<T>::output(at.in_place ? 0 : n, at.out_offset);
  T *out = at.in_place ? d_in.get() : d_out.get();
  if constexpr (std::is_same_v<T, int>)
    stage.scan(out, d_in.get(), n, inclusive, cfg, ws, at.stream);
  else stage.scan_float(out, d_in.get(), n, inclusive, cfg, ws, at.stream);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::string in_damage = d_in.guard_damage(), out_damage = d_out.guard_damage();
  if (!in_damage.empty()) FAIL(who << ": the input's guard changed (" << in_damage << ")");
  if (!out_damage.empty()) FAIL(who << ": wrote outside the output (" << out_damage << ")");
  if (at.in_place) return d_in.download();
  if (d_in.download() != in) FAIL(who << ": the input was modified by an out-of-place scan");
  return d_out.download();
}

// One call of the stage's scan on fresh random ints in [l, h].
void check_scan(std::size_t n, bool inclusive, const placement &at, const scan::config &cfg,
                scan::workspace &ws, int l = lo, int h = hi) {
  const std::uint64_t seed = course::fresh_seed();
  INFO("seed " << seed);
  std::vector<int> in = course::test::random_ints(n, seed, l, h);
  std::vector<int> want(n);
  scan::host_scan(want.data(), in.data(), n, inclusive);
  const std::string who = describe(n, inclusive, at, cfg);
  check_output(who, run_scan(in, inclusive, at, cfg, ws, who), want, n);
  SUCCEED();
}
void check_scan(std::size_t n, bool inclusive, bool in_place, const scan::config &cfg,
                scan::workspace &ws, int l = lo, int h = hi) {
  placement at;
  at.in_place = in_place;
  check_scan(n, inclusive, at, cfg, ws, l, h);
}

// The same on floats: one call of the stage's float scan, checked with the bound above.
void check_scan_float(std::size_t n, bool inclusive, const placement &at, const scan::config &cfg,
                      scan::workspace &ws) {
  const std::uint64_t seed = course::fresh_seed();
  INFO("seed " << seed);
  std::vector<float> in = course::test::random_floats(n, seed, -1.0f, 1.0f);
  std::vector<double> want(n), scale(n);
  double sum = 0, magnitude = 0;
  for (std::size_t i = 0; i < n; ++i) {
    magnitude += std::fabs(double(in[i]));
    want[i] = inclusive ? sum + in[i] : sum;
    scale[i] = magnitude;
    sum += in[i];
  }
  const std::string who = "float " + describe(n, inclusive, at, cfg) + ", bound 1e-6 * sum |x|";
  check_values(
      who, run_scan(in, inclusive, at, cfg, ws, who), want, n,
      [&](std::size_t i, float g, double w) { return course::test::close(g, w, scale[i], 1e-6); });
  SUCCEED();
}
void check_scan_float(std::size_t n, bool inclusive, bool in_place, const scan::config &cfg,
                      scan::workspace &ws) {
  placement at;
  at.in_place = in_place;
  check_scan_float(n, inclusive, at, cfg, ws);
}

// The warp scans of stage 06 on 32-element segments, against the host.
void check_warp_scan(std::size_t n, scan::warp_form form, bool inclusive, const placement &at) {
  const auto &stage = stage_under_test();
  const std::uint64_t seed = course::fresh_seed();
  INFO("seed " << seed);
  std::vector<int> in(n), want(n);
  course::fill_random_host(in.data(), n, seed, lo, hi);
  for (std::size_t s = 0; s < n; s += 32)
    scan::host_scan(want.data() + s, in.data() + s, std::min<std::size_t>(32, n - s), inclusive);
  auto d_in = course::test::guarded_input(in, at.in_offset, course::test::input_guard_value<int>());
  auto d_out = course::test::guarded<int>::output(n, at.out_offset);
  stage.warp_scan(d_out.get(), d_in.get(), n, form, inclusive, at.stream);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::string who = std::string("warp scan ") + scan::to_string(form) +
                          ", n=" + std::to_string(n) + (inclusive ? " inclusive" : " exclusive") +
                          " input offset " + std::to_string(at.in_offset) + " output offset " +
                          std::to_string(at.out_offset);
  const std::string damage = d_out.guard_damage();
  if (!damage.empty()) FAIL(who << ": wrote outside the output (" << damage << ")");
  check_output(who, d_out.download(), want, n);
  SUCCEED();
}

// A value the predicate keeps, for the input's guard: a stage that reads past the end keeps it.
int kept_guard(scan::predicate p) {
  return p == scan::predicate::even ? 0x3ffffffe : course::test::input_guard_value<int>();
}

// One compaction on fresh random ints, checked against the host: the kept elements in order,
// the count, nothing written after them, the input unchanged and its guard not taken.
void check_compact(std::size_t n, scan::predicate p, const placement &at, const scan::config &cfg,
                   scan::workspace &ws) {
  const auto &stage = stage_under_test();
  const std::uint64_t seed = course::fresh_seed();
  INFO("seed " << seed);
  std::vector<int> in(n), want;
  course::fill_random_host(in.data(), n, seed, lo, hi);
  for (int x : in)
    if (scan::keep(p, x)) want.push_back(x);
  auto d_in = course::test::guarded_input(in, at.in_offset, kept_guard(p));
  // The output has room for n; everything past the count must stay poison.
  auto d_out = course::test::guarded<int>::output(n, at.out_offset);
  const std::size_t count = stage.compact(d_out.get(), d_in.get(), n, p, cfg, ws, at.stream);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::string who = std::string("compact ") + scan::to_string(p) + ", n=" + std::to_string(n) +
                    " threads=" + std::to_string(cfg.threads) +
                    (cfg.partials ? " partials=" + std::to_string(cfg.partials) : std::string());
  if (at.in_offset) who += " input offset " + std::to_string(at.in_offset);
  if (at.out_offset) who += " output offset " + std::to_string(at.out_offset);
  if (count != want.size())
    FAIL(who << ": returned count " << count << ", expected " << want.size());
  const std::string damage = d_out.guard_damage();
  if (!damage.empty()) FAIL(who << ": wrote outside the output (" << damage << ")");
  const auto got = d_out.download();
  const std::size_t written = course::test::first_written(got, count);
  if (written != got.size()) FAIL(who << ": wrote past the kept elements, at element " << written);
  check_output(who, got, want, count);
  if (d_in.download() != in) FAIL(who << ": the input was modified");
  const std::string in_damage = d_in.guard_damage();
  if (!in_damage.empty()) FAIL(who << ": the input's guard changed (" << in_damage << ")");
  SUCCEED();
}

// --- stage 11: segmented scan ------------------------------------------------------------------
// How the head flags are laid out. With head flags an empty segment cannot be written down (a
// head marks an element); "segment offsets with empty segments" below turns offsets, repeats
// included, into heads and checks against a reference computed from the offsets themselves.
enum class heads_kind { none, all, first_only, dense, sparse, tile_edges, far_apart };
constexpr heads_kind all_heads_kinds[] = {
    heads_kind::none,   heads_kind::all,        heads_kind::first_only, heads_kind::dense,
    heads_kind::sparse, heads_kind::tile_edges, heads_kind::far_apart};
const char *to_string(heads_kind k) {
  switch (k) {
    case heads_kind::none: return "no heads (one segment)";
    case heads_kind::all: return "every element a head";
    case heads_kind::first_only: return "a head at 0 only";
    case heads_kind::dense: return "random heads, 1 in 3";
    case heads_kind::sparse: return "random heads, 1 in 5000 (segments across tiles and blocks)";
    case heads_kind::tile_edges: return "heads at and next to 1024/4096/8192 boundaries";
    case heads_kind::far_apart: return "a head every 20011 (tiles with and without heads)";
  }
  return "?";
}
std::vector<std::uint8_t> make_heads(std::size_t n, heads_kind kind, std::uint64_t seed) {
  std::vector<std::uint8_t> h(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    bool head = false;
    switch (kind) {
      case heads_kind::none: break;
      case heads_kind::all: head = true; break;
      case heads_kind::first_only: head = i == 0; break;
      case heads_kind::dense: head = course::random_int(seed, i, 0, 2) == 0; break;
      case heads_kind::sparse: head = course::random_int(seed, i, 0, 4999) == 0; break;
      case heads_kind::tile_edges:
        head = i % 8192 == 0 || i % 8192 == 8191 || i % 4096 == 1 || i % 1024 == 1023;
        break;
      case heads_kind::far_apart: head = i % 20011 == 7; break;
    }
    // Any nonzero byte is a head: not only 1.
    if (head) h[i] = std::uint8_t(1 + course::random_int(seed ^ 0x5eed, i, 0, 254));
  }
  return h;
}

struct segmented_placement {
  placement at;
  std::size_t heads_offset = 0;  // bytes: 1..3 misalign the flags' 4-byte loads
};

// One segmented scan of fresh random ints with the given heads, against reference(in) (or, if
// none is given, the host's segmented scan).
using segmented_reference =
    std::function<std::vector<int>(const std::vector<int> &in, bool inclusive)>;
void check_segmented(std::size_t n, const std::vector<std::uint8_t> &heads,
                     const std::string &layout, bool inclusive, const segmented_placement &sp,
                     const scan::config &cfg, scan::workspace &ws,
                     const segmented_reference &reference = {}, int l = lo, int h = hi) {
  const auto &stage = stage_under_test();
  const placement &at = sp.at;
  const std::uint64_t seed = course::fresh_seed();
  INFO("seed " << seed);
  std::vector<int> in = course::test::random_ints(n, seed, l, h);
  std::vector<int> want(n);
  if (reference) want = reference(in, inclusive);
  else scan::host_segmented_scan(want.data(), in.data(), heads.data(), n, inclusive);
  const std::string who =
      "segmented " + describe(n, inclusive, at, cfg) + ", " + layout +
      (sp.heads_offset ? ", flags offset " + std::to_string(sp.heads_offset) : std::string());
  auto d_in = course::test::guarded_input(in, at.in_offset, course::test::input_guard_value<int>());
  auto d_heads = course::test::guarded_input(heads, sp.heads_offset, std::uint8_t(1));
  auto d_out = course::test::guarded<int>::output(at.in_place ? 0 : n, at.out_offset);
  int *out = at.in_place ? d_in.get() : d_out.get();
  stage.segmented_scan(out, d_in.get(), d_heads.get(), n, inclusive, cfg, ws, at.stream);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::string in_damage = d_in.guard_damage(), out_damage = d_out.guard_damage(),
                    heads_damage = d_heads.guard_damage();
  if (!in_damage.empty()) FAIL(who << ": the input's guard changed (" << in_damage << ")");
  if (!out_damage.empty()) FAIL(who << ": wrote outside the output (" << out_damage << ")");
  if (!heads_damage.empty() || d_heads.download() != heads)
    FAIL(who << ": the head flags were modified");
  std::vector<int> got;
  if (at.in_place) {
    got = d_in.download();
  } else {
    if (d_in.download() != in) FAIL(who << ": the input was modified by an out-of-place scan");
    got = d_out.download();
  }
  check_output(who, got, want, n);
  SUCCEED();
}
void check_segmented(std::size_t n, heads_kind kind, bool inclusive, const segmented_placement &sp,
                     const scan::config &cfg, scan::workspace &ws) {
  const std::uint64_t seed = course::fresh_seed();
  INFO("heads seed " << seed);
  check_segmented(n, make_heads(n, kind, seed), to_string(kind), inclusive, sp, cfg, ws);
}

// --- stage 12: stream split --------------------------------------------------------------------
// One split on fresh random ints, against the host: the count, the kept elements in order, then
// the others in order, every one of the n slots written, the input unchanged and its guard not
// taken.
void check_split(std::size_t n, scan::predicate p, const placement &at, const scan::config &cfg,
                 scan::workspace &ws) {
  const auto &stage = stage_under_test();
  const std::uint64_t seed = course::fresh_seed();
  INFO("seed " << seed);
  std::vector<int> in(n), want(n);
  course::fill_random_host(in.data(), n, seed, lo, hi);
  const std::size_t want_count =
      scan::host_split(want.data(), in.data(), n, [p](int x) { return scan::keep(p, x); });
  auto d_in = course::test::guarded_input(in, at.in_offset, kept_guard(p));
  auto d_out = course::test::guarded<int>::output(n, at.out_offset);
  const std::size_t count = stage.split(d_out.get(), d_in.get(), n, p, cfg, ws, at.stream);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::string who = std::string("split ") + scan::to_string(p) + ", n=" + std::to_string(n) +
                    " threads=" + std::to_string(cfg.threads);
  if (at.in_offset) who += " input offset " + std::to_string(at.in_offset);
  if (at.out_offset) who += " output offset " + std::to_string(at.out_offset);
  if (at.stream) who += " (non-blocking stream)";
  if (count != want_count) FAIL(who << ": returned count " << count << ", expected " << want_count);
  const std::string damage = d_out.guard_damage();
  if (!damage.empty()) FAIL(who << ": wrote outside the output (" << damage << ")");
  check_output(who + " (kept first, then the rest)", d_out.download(), want, n);
  if (d_in.download() != in) FAIL(who << ": the input was modified");
  const std::string in_damage = d_in.guard_damage();
  if (!in_damage.empty()) FAIL(who << ": the input's guard changed (" << in_damage << ")");
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
  const std::size_t n = course::test::sanitizer_size(1000003);
  for (bool inclusive : {true, false}) check_scan_float(n, inclusive, true, cfg, ws);
}

TEST_CASE("arrays that are not 16-byte aligned (the stages' vector loads fall back to scalar ones)",
          "[scan]") {
  // Input and output misaligned alike, and each on its own: a stage that decides on one pointer's
  // alignment only takes the 16-byte path with the other misaligned.
  const auto &stage = stage_under_test();
  scan::workspace ws;
  const std::size_t n = 100003;
  const std::pair<std::size_t, std::size_t> offsets[] = {{1, 1}, {2, 2}, {3, 3}, {1, 0},
                                                         {0, 1}, {0, 2}, {3, 0}, {1, 2}};
  for (const auto &off : offsets) {
    scan::config cfg;
    placement at;
    at.in_offset = off.first;
    at.out_offset = off.second;
    if (stage.scan) {
      for (bool inclusive : {true, false}) check_scan(n, inclusive, at, cfg, ws);
      check_scan_float(n, true, at, cfg, ws);
    }
    if (stage.compact) check_compact(n, scan::predicate::odd, at, cfg, ws);
    if (stage.split) check_split(n, scan::predicate::odd, at, cfg, ws);
    if (stage.segmented_scan) {
      for (std::size_t heads_offset : {std::size_t(0), std::size_t(1), std::size_t(3)}) {
        segmented_placement sp;
        sp.at = at;
        sp.heads_offset = heads_offset;
        for (bool inclusive : {true, false})
          check_segmented(n, heads_kind::dense, inclusive, sp, cfg, ws);
      }
    }
  }
  if (stage.segmented_scan) {  // in place, misaligned, the flags misaligned too
    for (std::size_t off : {std::size_t(1), std::size_t(3)}) {
      segmented_placement sp;
      sp.at.in_place = true;
      sp.at.in_offset = off;
      sp.heads_offset = 2;
      check_segmented(n, heads_kind::sparse, false, sp, scan::config{}, ws);
    }
  }
  if (stage.scan) {
    for (std::size_t off : {std::size_t(1), std::size_t(3)}) {  // in place, misaligned
      placement at;
      at.in_place = true;
      at.in_offset = off;
      check_scan(n, false, at, scan::config{}, ws);
    }
  }
}

TEST_CASE("every alignment of input and output, at small sizes and around tile edges",
          "[scan][alignment]") {
  // A single pass may number its tiles from the 16-byte boundary below the input (stage 08), so
  // its first tile holds 1..3 positions before element 0 and its tile edges move with the input's
  // alignment; it may build the output's 16-byte stores from two lanes' elements. Every pairing of
  // the two arrays' offsets (0..3 elements, 16 in all), at sizes below a row and around the edges
  // of the single-pass stages' tiles (4 x 8 elements per thread up to 256 threads, 8192 past that;
  // here 32 threads: 1024, 256 and 1024 threads: 8192), each edge met at every offset: n + offset
  // falls on an edge, one before it, one past it. Any stage passes with scalar loads off a 16-byte
  // boundary: this is about right answers, not the speed of the path.
  const auto &stage = stage_under_test();
  if (!stage.scan) return;
  scan::workspace ws;
  const std::size_t small[] = {1, 2, 3, 4, 5, 7, 31, 33, 127, 129};
  int round = 0;  // alternates inclusive and exclusive, so that each is met at every shape
  // Under a sanitizer, 256 threads alone: a third of the calls, every offset and edge still met.
  const std::vector<int> threads_list =
      course::test::under_sanitizer() ? std::vector<int>{256} : std::vector<int>{32, 256, 1024};
  for (int threads : threads_list) {
    scan::config cfg;
    cfg.threads = threads;
    const std::size_t tile = threads <= 256 ? std::size_t(threads) * 32 : 8192;
    for (std::size_t in_offset = 0; in_offset < 4; ++in_offset) {
      for (std::size_t out_offset = 0; out_offset < 4; ++out_offset) {
        placement at;
        at.in_offset = in_offset;
        at.out_offset = out_offset;
        std::vector<std::size_t> sizes(std::begin(small), std::end(small));
        for (std::size_t edge : {tile, 2 * tile})
          for (std::size_t d : {std::size_t(0), std::size_t(1), std::size_t(2), std::size_t(5)})
            sizes.push_back(edge + d - 1 - in_offset);  // n + offset: edge - 1, edge, edge + 1, ...
        if (threads == 256) sizes.push_back(course::test::sanitizer_size(100003));
        for (std::size_t n : sizes) check_scan(n, ++round % 2 == 0, at, cfg, ws);
        check_scan_float(2 * tile + 3 - in_offset, true, at, cfg, ws);
      }
    }
  }
  for (std::size_t offset = 0; offset < 4; ++offset) {  // in place: the two arrays alike
    placement at;
    at.in_place = true;
    at.in_offset = offset;
    for (std::size_t n : {std::size_t(3), std::size_t(8191 - offset), std::size_t(8193),
                          course::test::sanitizer_size(100003)})
      for (bool inclusive : {true, false}) check_scan(n, inclusive, at, scan::config{}, ws);
  }
}

TEST_CASE("inclusive and exclusive scans match the host at awkward sizes and every block size",
          "[scan]") {
  const auto &stage = stage_under_test();
  if (!stage.scan) return;  // stages 07 and 09 compact; their own test case below
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
  // Sizes whose last tile, range or block is partial at every block size, in both directions
  // (386831, 65537 and 1311016: sizes that once broke a stage).
  const auto &stage = stage_under_test();
  if (!stage.scan) return;
  scan::workspace ws;
  for (std::size_t n : {std::size_t(1), std::size_t(33), std::size_t(65537), std::size_t(386831),
                        std::size_t(1000003), std::size_t(1311016)}) {
    for (int threads : block_sizes()) {
      scan::config cfg;
      cfg.threads = threads;
      for (bool inclusive : {true, false})
        check_scan(course::test::sanitizer_size(n), inclusive, true, cfg, ws);
    }
  }
}

TEST_CASE("sums that wrap around 2^32 match the host's wrapping scan", "[scan]") {
  if (!stage_under_test().scan) return;
  scan::workspace ws;
  scan::config cfg;
  const std::size_t n = course::test::sanitizer_size(1000003);
  for (bool inclusive : {true, false})
    check_scan(n, inclusive, false, cfg, ws, -(1 << 30), 1 << 30);
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
      for (bool inclusive : {true, false})
        check_scan(course::test::sanitizer_size(1000003), inclusive, false, cfg, ws);
    }
  }
}

TEST_CASE("many calls in a row with one workspace, alternating sizes", "[scan][repeat]") {
  if (!stage_under_test().scan) return;
  scan::workspace ws;
  const std::size_t sizes[] = {course::test::sanitizer_size(1000003), 33,
                               course::test::sanitizer_size((std::size_t(1) << 20) + 5), 1};
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
    if (stage.scan)
      CHECK_THROWS_AS(stage.scan(out.get(), in.get(), 64, true, cfg, ws, nullptr),
                      std::invalid_argument);
    if (stage.compact)
      CHECK_THROWS_AS(
          stage.compact(out.get(), in.get(), 64, scan::predicate::odd, cfg, ws, nullptr),
          std::invalid_argument);
    if (stage.split)
      CHECK_THROWS_AS(stage.split(out.get(), in.get(), 64, scan::predicate::odd, cfg, ws, nullptr),
                      std::invalid_argument);
    if (stage.segmented_scan)
      CHECK_THROWS_AS(stage.segmented_scan(out.get(), in.get(),
                                           reinterpret_cast<const std::uint8_t *>(in.get()), 64,
                                           true, cfg, ws, nullptr),
                      std::invalid_argument);
  }
}

// The compute-bound lab of stage 06 (the bench's part 3b): each 32-element segment scanned k times
// over, inclusive, each scan's output the next one's input; the host does the same in wrapping
// 32-bit arithmetic.
void check_warp_scan_lab(std::size_t n, scan::warp_form form, unsigned k) {
  const auto &stage = stage_under_test();
  const std::uint64_t seed = course::fresh_seed();
  INFO("seed " << seed);
  std::vector<int> in(n), want(n);
  course::fill_random_host(in.data(), n, seed, lo, hi);
  want = in;
  for (unsigned r = 0; r < k; ++r)
    for (std::size_t s = 0; s < n; s += 32)
      scan::host_scan(want.data() + s, want.data() + s, std::min<std::size_t>(32, n - s), true);
  auto d_in = course::test::guarded_input(in, 0, course::test::input_guard_value<int>());
  auto d_out = course::test::guarded<int>::output(n, 0);
  stage.warp_scan_lab(d_out.get(), d_in.get(), n, form, k, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::string who = std::string("warp scan lab ") + scan::to_string(form) +
                          ", n=" + std::to_string(n) + ", " + std::to_string(k) +
                          " scans per element";
  const std::string damage = d_out.guard_damage();
  if (!damage.empty()) FAIL(who << ": wrote outside the output (" << damage << ")");
  check_output(who, d_out.download(), want, n);
  SUCCEED();
}

TEST_CASE("each warp scan form repeated k times (the compute-bound lab) against the host",
          "[warp]") {
  const auto &stage = stage_under_test();
  if (!stage.warp_scan_lab) return;
  for (scan::warp_form form : scan::all_warp_forms)
    for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(33), std::size_t(100003)})
      for (unsigned k : {1u, 3u, 16u}) check_warp_scan_lab(n, form, k);
}

TEST_CASE("each warp scan form against the host on 32-element segments", "[warp]") {
  const auto &stage = stage_under_test();
  if (!stage.warp_scan) return;
  for (scan::warp_form form : scan::all_warp_forms) {
    for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(31), std::size_t(32),
                          std::size_t(33), std::size_t(1000003)}) {
      const std::size_t m = course::test::sanitizer_size(n);
      for (bool inclusive : {true, false}) check_warp_scan(m, form, inclusive, placement{});
    }
  }
}

TEST_CASE("compaction keeps all, none and some, in order, and returns the count", "[compact]") {
  const auto &stage = stage_under_test();
  if (!stage.compact) return;
  scan::workspace ws;
  const scan::predicate preds[] = {scan::predicate::odd, scan::predicate::all,
                                   scan::predicate::none, scan::predicate::even,
                                   scan::predicate::positive};
  for (std::size_t n : awkward_sizes()) {
    for (int threads : block_sizes()) {
      for (scan::predicate p : preds) {
        scan::config cfg;
        cfg.threads = threads;
        if (threads == 64) cfg.partials = 7;
        check_compact(n, p, placement{}, cfg, ws);
      }
    }
  }
}

TEST_CASE("segmented scans: every head layout, awkward sizes, every block size", "[segmented]") {
  const auto &stage = stage_under_test();
  if (!stage.segmented_scan) return;
  scan::workspace ws;
  // Every layout at every block size up to 65536 elements (8 tiles of 8192), and at 256 threads
  // above; the other block sizes see the random layouts there.
  for (std::size_t size :
       {std::size_t(0), std::size_t(1), std::size_t(31), std::size_t(33), std::size_t(8191),
        std::size_t(8193), std::size_t(65536), std::size_t(1000003)}) {
    const std::size_t n = course::test::sanitizer_size(size);
    for (int threads : block_sizes()) {
      scan::config cfg;
      cfg.threads = threads;
      for (heads_kind kind : all_heads_kinds) {
        if (n > 65536 && threads != 256 && kind != heads_kind::dense && kind != heads_kind::sparse)
          continue;
        for (bool inclusive : {true, false})
          check_segmented(n, kind, inclusive, segmented_placement{}, cfg, ws);
      }
    }
  }
}

TEST_CASE("segmented scans with the values aligned and the head flags not", "[segmented]") {
  // The values' 16-byte path depends on the input and output alone, the flags' 4-byte loads on the
  // flags' own alignment: aligned values with flags 1, 2 or 3 bytes off a 4-byte boundary is the
  // one combination that runs the values' vector path beside the flags' byte path, and a stage
  // that takes the flags' 4-byte loads on the values' alignment faults there (misaligned). Every
  // block size; out of place with heads dense, at the tile edges and sparse, in place with dense.
  const auto &stage = stage_under_test();
  if (!stage.segmented_scan) return;
  scan::workspace ws;
  for (std::size_t heads_offset : {std::size_t(1), std::size_t(2), std::size_t(3)}) {
    for (std::size_t size :
         {std::size_t(33), std::size_t(8193), std::size_t(65536), std::size_t(1000003)}) {
      const std::size_t n = course::test::sanitizer_size(size);
      for (int threads : block_sizes()) {
        if (size > 65536 && threads != 256 && threads != 1024) continue;
        scan::config cfg;
        cfg.threads = threads;
        for (bool in_place : {false, true}) {
          segmented_placement sp;
          sp.at.in_place = in_place;
          sp.heads_offset = heads_offset;
          for (heads_kind kind : {heads_kind::dense, heads_kind::tile_edges, heads_kind::sparse}) {
            if (in_place && kind != heads_kind::dense) continue;
            for (bool inclusive : {true, false}) check_segmented(n, kind, inclusive, sp, cfg, ws);
          }
        }
      }
    }
  }
}

TEST_CASE("segmented scans in place, and sums that wrap", "[segmented]") {
  const auto &stage = stage_under_test();
  if (!stage.segmented_scan) return;
  scan::workspace ws;
  for (std::size_t size :
       {std::size_t(33), std::size_t(65537), std::size_t(386831), std::size_t(1311016)}) {
    const std::size_t n = course::test::sanitizer_size(size);
    for (int threads : block_sizes()) {
      scan::config cfg;
      cfg.threads = threads;
      segmented_placement sp;
      sp.at.in_place = true;
      for (heads_kind kind :
           {heads_kind::none, heads_kind::dense, heads_kind::sparse, heads_kind::tile_edges})
        for (bool inclusive : {true, false}) check_segmented(n, kind, inclusive, sp, cfg, ws);
    }
  }
  const std::size_t n = course::test::sanitizer_size(1000003);
  const std::vector<std::uint8_t> heads = make_heads(n, heads_kind::sparse, course::fresh_seed());
  for (bool inclusive : {true, false})
    check_segmented(n, heads, "sparse heads, inputs in [-2^30, 2^30]", inclusive,
                    segmented_placement{}, scan::config{}, ws, segmented_reference{}, -(1 << 30),
                    1 << 30);
}

TEST_CASE(
    "segmented scan from segment offsets with empty segments, against a reference from the offsets",
    "[segmented]") {
  // Offsets o_0 = 0 <= o_1 <= ... <= o_k = n: segment j is [o_j, o_j+1), empty where two repeat.
  // As head flags, an empty segment leaves no trace: the scan must equal the offsets' scan.
  const auto &stage = stage_under_test();
  if (!stage.segmented_scan) return;
  scan::workspace ws;
  const std::size_t n = 100003;
  const std::vector<std::size_t> offsets = {0,    0,    0,    1,     5,     5,     33, 8191,
                                            8192, 8192, 8193, 16384, 50000, 50000, n,  n};
  std::vector<std::uint8_t> heads(n, 0);
  for (std::size_t o : offsets)
    if (o < n) heads[o] = 1;
  // The reference from the offsets alone, segment by segment.
  auto from_offsets = [&](const std::vector<int> &in, bool inclusive) {
    std::vector<int> want(in.size());
    for (std::size_t j = 0; j + 1 < offsets.size(); ++j) {
      int sum = 0;
      for (std::size_t i = offsets[j]; i < offsets[j + 1]; ++i) {
        want[i] = inclusive ? scan::wrap_add(sum, in[i]) : sum;
        sum = scan::wrap_add(sum, in[i]);
      }
    }
    return want;
  };
  for (bool inclusive : {true, false}) {
    for (int threads : {32, 256, 1024}) {
      scan::config cfg;
      cfg.threads = threads;
      check_segmented(n, heads, "offsets with empty segments", inclusive, segmented_placement{},
                      cfg, ws, from_offsets);
    }
  }
}

TEST_CASE(
    "split: kept elements first, then the rest, both in order, at awkward sizes and every block size",
    "[split]") {
  const auto &stage = stage_under_test();
  if (!stage.split) return;
  scan::workspace ws;
  const scan::predicate preds[] = {scan::predicate::odd, scan::predicate::all,
                                   scan::predicate::none, scan::predicate::even,
                                   scan::predicate::positive};
  for (std::size_t n : awkward_sizes())
    for (int threads : block_sizes())
      for (scan::predicate p : preds) {
        scan::config cfg;
        cfg.threads = threads;
        check_split(n, p, placement{}, cfg, ws);
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
    if (stage.compact && threads != 256)
      check_compact(big, scan::predicate::odd, placement{}, cfg, ws);
    if (stage.split) check_split(big, scan::predicate::odd, placement{}, cfg, ws);
    if (stage.segmented_scan)
      for (bool inclusive : {true, false})
        check_segmented(big, heads_kind::sparse, inclusive, segmented_placement{}, cfg, ws);
  }
}

TEST_CASE("a stage allocates nothing it does not free", "[scan][memory]") {
  // The workspace grows on the first call; later calls of the same size allocate nothing, and
  // whatever a call allocates for itself it frees. Counted in this process only
  // (harness/alloc_tracker.h), so other programs on the GPU do not matter.
  const auto &stage = stage_under_test();
  const std::size_t n = course::test::sanitizer_size(1000003);
  course::device_buffer<int> in(n), out(n);
  course::fill_random_device(in.get(), n, 5, lo, hi);
  scan::workspace ws;
  auto call = [&] {
    if (stage.scan) stage.scan(out.get(), in.get(), n, true, scan::config{}, ws, nullptr);
    if (stage.compact)
      stage.compact(out.get(), in.get(), n, scan::predicate::odd, scan::config{}, ws, nullptr);
    if (stage.warp_scan)
      stage.warp_scan(out.get(), in.get(), n, scan::warp_form::conditional, true, nullptr);
    if (stage.split)
      stage.split(out.get(), in.get(), n, scan::predicate::odd, scan::config{}, ws, nullptr);
    if (stage.segmented_scan)
      stage.segmented_scan(out.get(), in.get(), reinterpret_cast<const std::uint8_t *>(in.get()), n,
                           true, scan::config{}, ws, nullptr);
  };
  course::test::check_no_net_allocations("stage " + stage.info.id, call);
}

// The seeded random sweep: every block size, in place and out of place, inclusive and
// exclusive, ints and floats, partial counts for the two-level stages, input and output
// misaligned independently, sizes at the tile and warp boundaries, primes, and two above 2^24;
// compaction with every predicate; stage 06's warp scans on their own. A failure prints the case
// and the replay line.
TEST_CASE("seeded random sweep over sizes, block sizes, modes and alignments", "[sweep]") {
  const auto &stage = stage_under_test();
  course::test::sweep_rng rng(course::fresh_seed());
  INFO("sweep seed " << rng.seed());
  // Warp, 4-element rows, the two-level tiles (4B) and the look-back tiles (8192).
  const std::vector<std::size_t> boundaries = {32, 128, 256, 512, 1024, 2048, 4096, 8192};
  const std::size_t max_n = 3000000;
  scan::workspace ws;
  course::stream side;  // some calls go to a non-blocking stream
  const int cases = 72;
  for (int c = 0; c < cases; ++c) {
    scan::config cfg;
    cfg.threads = block_sizes()[std::size_t(c) % block_sizes().size()];
    std::size_t n = rng.awkward_size(boundaries, max_n);
    if (c == 17 || c == 52) n = (std::size_t(1) << 24) + rng.between(1, 1 << 20);
    placement at;
    at.in_offset = rng.below(4);
    at.out_offset = rng.below(4);
    at.stream = rng.chance(0.25) ? cudaStream_t(side) : nullptr;
    INFO("case " << c);
    if (stage.scan) {
      at.in_place = rng.chance(0.4);
      if (stage.two_level)
        cfg.partials = rng.pick({0, 0, 1, 2, 7, 1000, int(rng.between(1, 5000))});
      const bool inclusive = rng.chance(0.5);
      if (rng.chance(0.25)) check_scan_float(n, inclusive, at, cfg, ws);
      else check_scan(n, inclusive, at, cfg, ws);
    }
    if (stage.compact) {
      if (rng.chance(0.3)) cfg.partials = int(rng.between(1, 3000));
      const scan::predicate p =
          rng.pick({scan::predicate::odd, scan::predicate::even, scan::predicate::positive,
                    scan::predicate::all, scan::predicate::none});
      check_compact(n, p, at, cfg, ws);
    }
    if (stage.split) {
      const scan::predicate p =
          rng.pick({scan::predicate::odd, scan::predicate::even, scan::predicate::positive,
                    scan::predicate::all, scan::predicate::none});
      check_split(n, p, at, cfg, ws);
    }
    if (stage.segmented_scan) {
      at.in_place = rng.chance(0.4);
      segmented_placement sp;
      sp.at = at;
      sp.heads_offset = rng.below(4);
      const heads_kind kind = all_heads_kinds[rng.below(std::size(all_heads_kinds))];
      check_segmented(n, kind, rng.chance(0.5), sp, cfg, ws);
    }
    if (stage.warp_scan && c % 3 == 0) {
      const scan::warp_form form = scan::all_warp_forms[rng.below(std::size(scan::all_warp_forms))];
      check_warp_scan(std::min<std::size_t>(n, 200000), form, rng.chance(0.5), at);
    }
  }
}
