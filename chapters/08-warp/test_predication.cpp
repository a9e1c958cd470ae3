// SPDX-License-Identifier: BSD-3-Clause
// Tests of stage 05 (predication and divergence): the kernels are there to be read in SASS, but
// they must also compute what they say, in both forms (as written, and the student's branch-free
// one). Each is checked against a host version written from the formulas in warp.h, on fresh
// random data with negative values (the seed is printed on failure; COURSE_SEED replays) into
// which the edges are planted: 0, +-1, +-2, the clamp bounds and their neighbours, the ends of the
// value range; for floats NaN, +-0, +-infinity, +-0.5, +-1, +-1.5. Integer results compare exactly;
// float ones bit for bit (an abs, a subtraction, a min and a max, each exactly rounded), any NaN
// matching any NaN. Inputs are guarded (0x3fffffff, NaN for floats), outputs poisoned with guard
// zones; the [sweep] test draws each kernel's form, sizes, value ranges and array offsets from one
// seed.
#include "warp.h"

#include "common/memory.h"
#include "common/random.h"
#include "common/random_fill.h"
#include "harness/catch.h"
#include "harness/sweep.h"
#include "harness/test_guards.h"
#include "harness/test_support.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

const warp::predication_stage &stage() {
  return course::test::stage_under_test<warp::predication_stage>();
}

constexpr int lo = -1000000, hi = 1000000;  // 3 * v + 1 stays far inside int

int reference(warp::branchy kernel, int v) {
  std::uint32_t u = static_cast<std::uint32_t>(v);
  switch (kernel) {
    case warp::branchy::short_if: return v < 0 ? 3 * v + 7 : v;
    case warp::branchy::if_else: return v % 2 != 0 ? 3 * v + 1 : v / 2;
    case warp::branchy::ternary: return v > 0 ? 5 * v : -v / 3;
    case warp::branchy::long_if_else:
      for (std::uint32_t k = 0; k < 12; ++k) u = v % 2 != 0 ? u * u + k : (u ^ (u >> 5)) * 3u + k;
      return static_cast<int>(u);
    case warp::branchy::data_loop:
      for (int k = 0; k < (v & 15); ++k) u = u * 2654435761u + static_cast<std::uint32_t>(k);
      return static_cast<int>(u);
    case warp::branchy::min_max_abs: return std::clamp(v, -1000, 1000) + std::abs(v);
  }
  throw std::logic_error("no reference for this kernel");
}

// std::clamp's rule: comparisons with a NaN are false, so a NaN stays NaN.
float reference_clamp_abs(float x) {
  const float c = std::fabs(x) - 1.0f;
  return c < -0.5f ? -0.5f : (c > 0.5f ? 0.5f : c);
}

// Bit for bit, except that any NaN matches any NaN (the GPU's NaN need not keep the input's
// payload).
bool same_float(float got, double want) {
  const float w = static_cast<float>(want);
  if (std::isnan(got) || std::isnan(w)) return std::isnan(got) && std::isnan(w);
  return std::memcmp(&got, &w, sizeof got) == 0;
}

// The edges planted into every random input (those inside [l, h]), spread over the array.
template <class T>
void plant_edges(std::vector<T> &in, const std::vector<T> &edges) {
  const std::size_t n = in.size();
  if (n == 0) return;
  const std::size_t step = std::max<std::size_t>(1, n / (edges.size() + 1));
  for (std::size_t j = 0; j < edges.size(); ++j) in[(j * step + j) % n] = edges[j];
}

std::vector<int> int_edges(int l, int h) {
  std::vector<int> e;
  for (long long v : {0LL, 1LL, -1LL, 2LL, -2LL, 3LL, -3LL, -1000LL, 1000LL, -999LL, 999LL, -1001LL,
                      1001LL, (long long)l, (long long)h, (long long)l + 1, (long long)h - 1})
    if (v >= l && v <= h) e.push_back(static_cast<int>(v));
  return e;
}

std::vector<float> float_edges() {
  const float inf = std::numeric_limits<float>::infinity(),
              nan = std::numeric_limits<float>::quiet_NaN();
  return {nan, 0.0f, -0.0f, inf, -inf, 0.5f, -0.5f, 1.0f, -1.0f, 1.5f, -1.5f, 2.0f, -2.0f, -nan};
}

int reference_branch_of(int length, int v) {
  std::uint32_t u = static_cast<std::uint32_t>(v);
  if (v % 2 != 0)
    for (std::uint32_t k = 0; k < static_cast<std::uint32_t>(length); ++k) u = u * u + k;
  return static_cast<int>(u);
}

// Where the arrays start in their allocations (in elements), each on its own.
struct placement {
  std::size_t in = 0, out = 0;
};

std::string describe_case(const std::string &what, std::size_t n, const placement &at, double l,
                          double h) {
  std::ostringstream os;
  os << what << ", n=" << n << ", inputs in [" << l << ", " << h << "]";
  if (at.in) os << ", input offset " << at.in;
  if (at.out) os << ", output offset " << at.out;
  return os.str();
}

// out = f(in) on n random ints in [l, h] with the edges inside [l, h] planted, every element
// against ref. The input is guarded by 0x3fffffff (read by mistake, it lands in some output element
// or past the end); the output is poisoned, with guards before and after it that must stay
// poisoned, and the input must be unchanged.
template <class Run, class Ref>
void check_map(const std::string &what, std::size_t n, Run run, Ref ref, int l = lo, int h = hi,
               const placement &at = {}) {
  const std::uint64_t seed = course::fresh_seed();
  std::vector<int> in = course::test::random_ints(n, seed, l, h);
  plant_edges(in, int_edges(l, h));
  auto d_in = course::test::guarded_input(in, at.in, course::test::input_guard_value<int>());
  auto d_out = course::test::guarded<int>::output(n, at.out);
  run(d_out.get(), d_in.get(), n);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto got = d_out.download();
  const std::string where = describe_case(what, n, at, l, h);
  INFO("seed " << seed);
  auto report = course::test::check_elements(
      n, [&](std::size_t i) { return got[i]; }, [&](std::size_t i) { return ref(in[i]); },
      [](std::size_t, int g, double want) { return g == want; });
  if (!report.ok())
    FAIL(course::test::describe(stage().info.id, where, n, report)
         << " (input " << in[report.first] << ")");
  SUCCEED();  // one assertion per checked call, so the summary counts them
  const std::string damage = d_out.guard_damage();
  if (!damage.empty())
    FAIL("stage " << stage().info.id << ", " << where << ": wrote outside the output (" << damage
                  << ")");
  if (d_in.download() != in || !d_in.guard_damage().empty())
    FAIL("stage " << stage().info.id << ", " << where << ": the input or its guards were modified");
}

// clamp_abs in form f on n random floats in [l, h] and the float edges, bit for bit; the input
// guarded by NaN, the output as above.
void check_clamp_abs(warp::form f, std::size_t n, float l = -2.0f, float h = 2.0f,
                     const placement &at = {}) {
  const std::uint64_t seed = course::fresh_seed();
  std::vector<float> in = course::test::random_floats(n, seed, l, h);
  plant_edges(in, float_edges());
  auto d_in = course::test::guarded_input(in, at.in, course::test::input_guard_value<float>());
  auto d_out = course::test::guarded<float>::output(n, at.out);
  stage().clamp_abs(f, d_out.get(), d_in.get(), n);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto got = d_out.download();
  const std::string where = describe_case(std::string("clamp_abs, ") + to_string(f), n, at, l, h);
  INFO("seed " << seed);
  auto report = course::test::check_elements(
      n, [&](std::size_t i) { return got[i]; },
      [&](std::size_t i) { return reference_clamp_abs(in[i]); },
      [](std::size_t, float g, double want) { return same_float(g, want); });
  if (!report.ok())
    FAIL(course::test::describe(stage().info.id, where, n, report)
         << " (input " << in[report.first] << ")");
  SUCCEED();
  const std::string damage = d_out.guard_damage();
  if (!damage.empty())
    FAIL("stage " << stage().info.id << ", " << where << ": wrote outside the output (" << damage
                  << ")");
  if (!d_in.guard_damage().empty())
    FAIL("stage " << stage().info.id << ", " << where << ": the input's guards were modified");
  const auto after = d_in.download();
  if (std::memcmp(after.data(), in.data(), n * sizeof(float)) != 0)
    FAIL("stage " << stage().info.id << ", " << where << ": the input was modified");
}

template <int... N>
std::vector<int> lengths_of(std::integer_sequence<int, N...>) {
  return {N...};
}

const std::size_t sizes[] = {0, 1, 31, 33, 1000003};

}  // namespace

std::string name(warp::branchy kernel, warp::form f) {
  return std::string(to_string(kernel)) + ", " + to_string(f);
}

TEST_CASE("each conditional kernel computes what it says, as written and branch-free",
          "[predication]") {
  for (auto f : warp::all_forms)
    for (auto kernel : warp::all_branchy)
      for (std::size_t n : sizes)
        check_map(
            name(kernel, f), n,
            [&](int *out, const int *in, std::size_t m) { stage().run(kernel, f, out, in, m); },
            [&](int v) { return reference(kernel, v); });
}

TEST_CASE("the kernels in unsigned arithmetic, over the whole int range", "[predication]") {
  const int imin = std::numeric_limits<int>::min(), imax = std::numeric_limits<int>::max();
  for (auto f : warp::all_forms)
    for (auto kernel : {warp::branchy::long_if_else, warp::branchy::data_loop})
      check_map(
          name(kernel, f), 100003,
          [&](int *out, const int *in, std::size_t m) { stage().run(kernel, f, out, in, m); },
          [&](int v) { return reference(kernel, v); }, imin, imax);
}

TEST_CASE("branches of every compiled length compute what they say",
          "[predication][branch_length]") {
  for (int length : lengths_of(warp::branch_lengths{}))
    for (std::size_t n : {std::size_t(33), std::size_t(1000003)})
      check_map(
          "branch_of<" + std::to_string(length) + ">", n,
          [&](int *out, const int *in, std::size_t m) {
            stage().branch_length(length, out, in, m);
          },
          [&](int v) { return reference_branch_of(length, v); });
}

TEST_CASE("a branch length that was not compiled is refused", "[predication][branch_length]") {
  course::device_buffer<int> in(32), out(32);
  for (int length : {0, 9, 33, -1}) {
    INFO("length " << length);
    CHECK_THROWS_AS(stage().branch_length(length, out.get(), in.get(), 32), std::invalid_argument);
  }
}

TEST_CASE("clamp of |x| - 1 on floats, bit for bit, NaN kept", "[predication][float]") {
  for (auto f : warp::all_forms)
    for (std::size_t n : sizes) check_clamp_abs(f, n);
}

TEST_CASE("input and output misaligned, each on its own", "[predication]") {
  const placement offsets[] = {{1, 0}, {0, 1}, {3, 2}};
  for (const placement &at : offsets) {
    for (auto f : warp::all_forms) {
      for (auto kernel : warp::all_branchy)
        check_map(
            name(kernel, f), 100003,
            [&](int *out, const int *in, std::size_t m) { stage().run(kernel, f, out, in, m); },
            [&](int v) { return reference(kernel, v); }, lo, hi, at);
      check_clamp_abs(f, 100003, -2.0f, 2.0f, at);
    }
  }
}

// The seeded random sweep: each kernel in turn (the six branchy ones, every compiled branch_of<N>,
// clamp_abs), twice over, each time in a form drawn at random (as written or branch-free); sizes at
// the warp, block and grid-stride boundaries, primes, one above 2^24; inputs from ranges of both
// signs, one sign, small values, and for the kernels in unsigned arithmetic the whole int range;
// input and output offsets 0..3 elements, drawn independently; inputs guarded (0x3fffffff, NaN for
// floats). A failure names the case; the test main prints the replay line.
TEST_CASE("seeded random sweep: every kernel on random sizes, values and alignments", "[sweep]") {
  course::test::sweep_rng rng(course::fresh_seed());
  INFO("sweep seed " << rng.seed());
  const std::vector<int> lengths = lengths_of(warp::branch_lengths{});
  const std::size_t kinds = std::size(warp::all_branchy) + lengths.size() + 1;
  const std::vector<std::size_t> boundaries = {32, 256, course::test::resident_threads()};
  // 3 * v + 7, 5 * v and min(max(v, -1000), 1000) + |v| stay inside int for |v| <= 4e8.
  const course::test::value_range signed_ranges[] = {
      {lo, hi}, {-400000000, 400000000}, {-10, 10}, {0, hi}, {lo, 0}};
  const int cases = int(2 * kinds);
  for (int c = 0; c < cases; ++c) {
    std::size_t n = rng.awkward_size(boundaries, 3000000);
    if (c == 13) n = (std::size_t(1) << 24) + rng.between(1, 1 << 20);
    placement at;
    at.in = rng.below(4);
    at.out = rng.below(4);
    const std::size_t kind = std::size_t(c) % kinds;
    const warp::form f = rng.chance(0.5) ? warp::form::as_written : warp::form::branch_free;
    INFO("case " << c);
    if (kind < std::size(warp::all_branchy)) {
      const warp::branchy kernel = warp::all_branchy[kind];
      const bool is_unsigned =
          kernel == warp::branchy::long_if_else || kernel == warp::branchy::data_loop;
      course::test::value_range r = signed_ranges[rng.below(std::size(signed_ranges))];
      if (is_unsigned && rng.chance(0.4))
        r = {std::numeric_limits<int>::min(), std::numeric_limits<int>::max()};
      check_map(
          name(kernel, f), n,
          [&](int *out, const int *in, std::size_t m) { stage().run(kernel, f, out, in, m); },
          [&](int v) { return reference(kernel, v); }, r.lo, r.hi, at);
    } else if (kind < std::size(warp::all_branchy) + lengths.size()) {
      const int length = lengths[kind - std::size(warp::all_branchy)];
      course::test::value_range r = signed_ranges[rng.below(std::size(signed_ranges))];
      if (rng.chance(0.4)) r = {std::numeric_limits<int>::min(), std::numeric_limits<int>::max()};
      check_map(
          "branch_of<" + std::to_string(length) + ">", n,
          [&](int *out, const int *in, std::size_t m) {
            stage().branch_length(length, out, in, m);
          },
          [&](int v) { return reference_branch_of(length, v); }, r.lo, r.hi, at);
    } else {
      const float h = rng.pick({2.0f, 0.6f, 1e-3f, 1e6f});
      check_clamp_abs(f, n, -h, h, at);
    }
  }
}
