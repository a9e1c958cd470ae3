// SPDX-License-Identifier: BSD-3-Clause
// Tests of stage 05 (predication and divergence): the kernels are there to be read in SASS, but
// they must also compute what they say. Each is checked against a host version written from the
// formulas in warp.h, on fresh random data with negative values (the seed is printed on
// failure; COURSE_SEED replays). Integer results compare exactly; so do the float ones, which
// are a min, a max, an abs and one addition, each exactly rounded.
#include "warp.h"

#include "common/memory.h"
#include "common/random.h"
#include "common/random_fill.h"
#include "harness/catch.h"
#include "harness/test_support.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

using course::test::guard_elements;

namespace {

const warp::predication_stage &stage() { return course::test::stage_under_test<warp::predication_stage>(); }

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

int reference_branch_of(int length, int v) {
  std::uint32_t u = static_cast<std::uint32_t>(v);
  if (v % 2 != 0)
    for (std::uint32_t k = 0; k < static_cast<std::uint32_t>(length); ++k) u = u * u + k;
  return static_cast<int>(u);
}

// out = f(in) on n random ints, every element against ref, nothing written past n.
template <class Run, class Ref>
void check_map(const std::string &what, std::size_t n, Run run, Ref ref) {
  const std::uint64_t seed = course::fresh_seed();
  course::device_buffer<int> in(n), out(n + guard_elements);
  course::fill_random_device(in.get(), n, seed, lo, hi);
  course::test::poison_device(out.get(), n + guard_elements);
  run(out.get(), in.get(), n);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto got = course::test::copy_to_host(out.get(), n + guard_elements);
  auto report = course::test::check_elements(
      n, [&](std::size_t i) { return got[i]; }, [&](std::size_t i) { return ref(course::random_int(seed, i, lo, hi)); },
      [](std::size_t, int g, double want) { return g == want; });
  INFO("seed " << seed << " (COURSE_SEED replays the run)");
  if (!report.ok())
    FAIL(course::test::describe(stage().info.id, what + ", n=" + std::to_string(n), n, report)
         << " (input " << course::random_int(seed, report.first, lo, hi) << ")");
  SUCCEED();  // one assertion per checked call, so the summary counts them
  const std::size_t past = course::test::first_written(got, n);
  if (past < got.size()) FAIL("stage " << stage().info.id << ", " << what << ", n=" << n << ": wrote past the end, at " << past);
}

template <int... N>
std::vector<int> lengths_of(std::integer_sequence<int, N...>) {
  return {N...};
}

const std::size_t sizes[] = {0, 1, 31, 33, 1000003};

}  // namespace

TEST_CASE("each conditional kernel computes what it says", "[predication]") {
  for (auto kernel : warp::all_branchy)
    for (std::size_t n : sizes)
      check_map(
          to_string(kernel), n, [&](int *out, const int *in, std::size_t m) { stage().run(kernel, out, in, m); },
          [&](int v) { return reference(kernel, v); });
}

TEST_CASE("branches of every compiled length compute what they say", "[predication][branch_length]") {
  for (int length : lengths_of(warp::branch_lengths{}))
    for (std::size_t n : {std::size_t(33), std::size_t(1000003)})
      check_map(
          "branch_of<" + std::to_string(length) + ">", n,
          [&](int *out, const int *in, std::size_t m) { stage().branch_length(length, out, in, m); },
          [&](int v) { return reference_branch_of(length, v); });
}

TEST_CASE("a branch length that was not compiled is refused", "[predication][branch_length]") {
  course::device_buffer<int> in(32), out(32);
  for (int length : {0, 9, 33, -1}) {
    INFO("length " << length);
    CHECK_THROWS_AS(stage().branch_length(length, out.get(), in.get(), 32), std::invalid_argument);
  }
}

TEST_CASE("clamp plus abs on floats, exactly", "[predication][float]") {
  for (std::size_t n : sizes) {
    const std::uint64_t seed = course::fresh_seed();
    course::device_buffer<float> in(n), out(n + guard_elements);
    course::fill_random_device(in.get(), n, seed, -2.0f, 2.0f);
    course::test::poison_device(out.get(), n + guard_elements);
    stage().clamp_abs(out.get(), in.get(), n);
    CUDA_CHECK(cudaDeviceSynchronize());
    const auto got = course::test::copy_to_host(out.get(), n + guard_elements);
    auto report = course::test::check_elements(
        n, [&](std::size_t i) { return got[i]; },
        [&](std::size_t i) {
          const float x = course::random_float(seed, i, -2.0f, 2.0f);
          return std::fmin(std::fmax(x, -0.5f), 0.5f) + std::fabs(x);
        },
        [](std::size_t, float g, double want) { return g == want; });
    INFO("seed " << seed << " (COURSE_SEED replays the run)");
    if (!report.ok()) FAIL(course::test::describe(stage().info.id, "clamp_abs, n=" + std::to_string(n), n, report));
    SUCCEED();
    const std::size_t past = course::test::first_written(got, n);
    if (past < got.size()) FAIL("stage " << stage().info.id << ", clamp_abs, n=" << n << ": wrote past the end, at " << past);
  }
}
