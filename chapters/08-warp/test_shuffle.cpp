// SPDX-License-Identifier: BSD-3-Clause
// Tests of stage 01 (shuffle forms): every form, width and offset against the host model of a
// warp (warp_model.h), with the full mask and with partial ones; and the lane and segment ids of
// one- and two-dimensional blocks against the formulas and against the hardware's %laneid; the
// float and double forms, bit for bit (NaN bit patterns and both halves of a double included).
// Inputs are fresh random values, distinct within each warp (the seed is printed on failure;
// COURSE_SEED replays), followed by guards; outputs are poisoned, with guard zones that must stay
// poisoned. The [sweep] test draws random cases, block shapes and array offsets from one seed.
#include "warp.h"
#include "warp_model.h"

#include "common/memory.h"
#include "common/random.h"
#include "common/random_fill.h"
#include "harness/catch.h"
#include "harness/sweep.h"
#include "harness/test_support.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace {

const warp::shuffle_stage &stage() { return course::test::stage_under_test<warp::shuffle_stage>(); }

constexpr int widths[] = {2, 4, 8, 16, 32};

// The arguments tried for a form: every source lane, offset or lane mask a warp can tell apart,
// and for broadcast and rotate sources that wrap (negative ones, and ones past the width).
std::vector<int> args_of(warp::shuffle_form form) {
  int lo = 0, hi = warp::lanes - 1;
  if (form == warp::shuffle_form::broadcast) lo = -33, hi = 64;
  if (form == warp::shuffle_form::rotate) lo = -40, hi = 40;
  std::vector<int> args;
  for (int a = lo; a <= hi; ++a) args.push_back(a);
  return args;
}

std::string describe(const warp::shuffle_case &c) {
  std::ostringstream os;
  os << to_string(c.form) << " arg=" << c.arg << " width=" << c.width << " mask=0x" << std::hex
     << c.mask;
  return os.str();
}

// Where a launch's arrays start in their allocations (in elements), each on its own.
struct shuffle_offsets {
  std::size_t in = 0, out = 0, cases = 0;
};

// Runs the cases, one warp each, and checks every lane where the model defines the result. The
// input is guarded (a warp past the last case would read the guard value, and write past the
// output's end); the cases' guard is a full-mask broadcast.
void check_cases(const std::vector<warp::shuffle_case> &cases, const std::string &what,
                 const shuffle_offsets &at = {}) {
  const std::uint64_t seed = course::fresh_seed();
  const std::size_t n = cases.size() * warp::lanes;
  // No two lanes of a warp hold the same value, so a lane that read the wrong source always shows.
  const std::vector<int> in = course::test::lane_tagged_ints(n, seed);
  auto d_in = course::test::guarded<int>::input(n, at.in, course::test::input_guard_value<int>());
  auto d_cases = course::test::guarded<warp::shuffle_case>::input(
      cases.size(), at.cases,
      warp::shuffle_case{warp::shuffle_form::broadcast, 0, warp::lanes, warp::full_mask});
  auto d_out = course::test::guarded<int>::output(n, at.out);
  d_in.upload(in);
  d_cases.upload(cases);
  stage().shuffle(d_out.get(), d_in.get(), d_cases.get(), static_cast<int>(cases.size()));
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto got = d_out.download();
  std::string where = what;
  if (at.in) where += ", input offset " + std::to_string(at.in);
  if (at.out) where += ", output offset " + std::to_string(at.out);
  if (at.cases) where += ", cases offset " + std::to_string(at.cases);

  const auto model = [&](std::size_t i) {
    return warp::model::shuffle(cases[i / warp::lanes], &in[i - i % warp::lanes],
                                static_cast<int>(i % warp::lanes));
  };
  auto report = course::test::check_elements(
      n, [&](std::size_t i) { return got[i]; },
      [&](std::size_t i) { return model(i).value_or(got[i]); },  // undefined: whatever it got
      [](std::size_t, int g, double want) { return g == want; });
  INFO("seed " << seed);
  if (!report.ok()) {
    const auto &c = cases[report.first / warp::lanes];
    const int lane = static_cast<int>(report.first % warp::lanes);
    FAIL(course::test::describe(stage().info.id, where, n, report)
         << "\n  that is lane " << lane << " of the warp doing " << describe(c)
         << ", which should read lane " << warp::model::source_lane(c.form, lane, c.arg, c.width)
         << (c.mask >> lane & 1u ? "" : " (its own: not in the mask)"));
  }
  SUCCEED();  // one assertion per checked call, so the summary counts them
  const std::string damage = d_out.guard_damage();
  if (!damage.empty())
    FAIL("stage " << stage().info.id << ", " << where << ": wrote outside the output (" << damage
                  << ")");
  if (d_in.download() != in || !d_in.guard_damage().empty())
    FAIL("stage " << stage().info.id << ", " << where << ": the input or its guards were modified");
}

// The float and double forms: the same cases on values whose bits carry the int test's
// (course::test::value_from), compared bit for bit.
template <class T>
void check_cases_typed(const std::vector<warp::shuffle_case> &cases, const std::string &what,
                       void (*run)(T *, const T *, const warp::shuffle_case *, int)) {
  const std::uint64_t seed = course::fresh_seed();
  const std::size_t n = cases.size() * warp::lanes;
  const std::vector<int> in_int = course::test::lane_tagged_ints(n, seed);
  std::vector<T> in(n);
  for (std::size_t i = 0; i < n; ++i) in[i] = course::test::value_from<T>(in_int[i]);
  auto d_in = course::test::guarded<T>::input(n, 0, std::numeric_limits<T>::quiet_NaN());
  auto d_cases = course::test::guarded<warp::shuffle_case>::input(
      cases.size(), 0,
      warp::shuffle_case{warp::shuffle_form::broadcast, 0, warp::lanes, warp::full_mask});
  auto d_out = course::test::guarded<T>::output(n, 0);
  d_in.upload(in);
  d_cases.upload(cases);
  run(d_out.get(), d_in.get(), d_cases.get(), static_cast<int>(cases.size()));
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto got = d_out.download();
  INFO("seed " << seed);
  for (std::size_t i = 0; i < n; ++i) {
    const auto want = warp::model::shuffle(cases[i / warp::lanes], &in_int[i - i % warp::lanes],
                                           static_cast<int>(i % warp::lanes));
    if (!want) continue;  // undefined
    const T w = course::test::value_from<T>(*want);
    if (std::memcmp(&got[i], &w, sizeof w) != 0) {
      std::uint64_t gb = 0, wb = 0;
      std::memcpy(&gb, &got[i], sizeof(T));
      std::memcpy(&wb, &w, sizeof(T));
      FAIL("stage " << stage().info.id << ", " << what << ": element " << i << " (lane "
                    << i % warp::lanes << " of the warp doing " << describe(cases[i / warp::lanes])
                    << ") has bits 0x" << std::hex << gb << ", expected 0x" << wb);
    }
  }
  SUCCEED();
  const std::string damage = d_out.guard_damage();
  if (!damage.empty())
    FAIL("stage " << stage().info.id << ", " << what << ": wrote outside the output (" << damage
                  << ")");
  if (!d_in.guard_damage().empty())
    FAIL("stage " << stage().info.id << ", " << what << ": the input's guards were modified");
}

std::vector<warp::shuffle_case> cases_of(warp::shuffle_form form,
                                         const std::vector<unsigned> &masks) {
  std::vector<warp::shuffle_case> cases;
  for (unsigned mask : masks)
    for (int width : widths)
      for (int arg : args_of(form)) cases.push_back({form, arg, width, mask});
  return cases;
}

}  // namespace

TEST_CASE("each shuffle form matches the warp model for every width and offset (full mask)",
          "[shuffle]") {
  for (auto form : warp::all_shuffle_forms)
    check_cases(cases_of(form, {warp::full_mask}),
                std::string("form=") + to_string(form) + ", full mask");
}

TEST_CASE(
    "shuffles with partial masks: lanes outside keep their value, lanes inside read what is defined",
    "[shuffle][mask]") {
  std::vector<unsigned> masks = {0x0000ffffu, 0xffff0000u, 0x55555555u, 0xaaaaaaaau, 0x0f0f0f0fu,
                                 0x80000001u, 0x00000001u, 0xfffffffeu, 0x7fffffffu};
  const std::uint64_t seed = course::fresh_seed();
  for (std::uint64_t k = 0; k < 4; ++k)
    masks.push_back(static_cast<unsigned>(course::random_bits(seed, k)));
  INFO("random masks from seed " << seed);
  for (auto form : warp::all_shuffle_forms)
    check_cases(cases_of(form, masks), std::string("form=") + to_string(form) + ", partial masks");
}

TEST_CASE("float and double shuffles move every bit, in every form (full and partial masks)",
          "[shuffle][float]") {
  const std::vector<unsigned> masks = {warp::full_mask, 0x0000ffffu, 0x55555555u, 0x80000001u};
  for (auto form : warp::all_shuffle_forms) {
    const auto cases = cases_of(form, masks);
    check_cases_typed<float>(cases, std::string("float, form=") + to_string(form),
                             stage().shuffle_float);
    check_cases_typed<double>(cases, std::string("double, form=") + to_string(form),
                              stage().shuffle_double);
  }
}

namespace {

// One block of x * y threads: each thread's ids against the formulas and %laneid. The output
// starts out_offset elements into its allocation, poisoned, with a guard zone.
void check_ids(int x, int y, int width, std::size_t out_offset = 0) {
  const std::size_t n = std::size_t(x) * y;
  auto d_out = course::test::guarded<warp::thread_ids>::output(n, out_offset);
  stage().ids(d_out.get(), x, y, width);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto got = d_out.download();
  std::string what =
      "block " + std::to_string(x) + " x " + std::to_string(y) + ", width " + std::to_string(width);
  if (out_offset) what += ", output offset " + std::to_string(out_offset);
  for (int ty = 0; ty < y; ++ty) {
    for (int tx = 0; tx < x; ++tx) {
      const int linear = ty * x + tx;
      const warp::thread_ids want{linear % warp::lanes, linear / warp::lanes,
                                  linear % warp::lanes / width, linear % warp::lanes % width,
                                  linear % warp::lanes};
      const warp::thread_ids &g = got[linear];
      const char *field = g.lane != want.lane           ? "lane"
                          : g.warp != want.warp         ? "warp"
                          : g.segment != want.segment   ? "segment"
                          : g.seg_lane != want.seg_lane ? "seg_lane"
                          : g.hw_lane != want.hw_lane   ? "hw_lane (%laneid)"
                                                        : nullptr;
      if (field)
        FAIL("stage " << stage().info.id << ", " << what << ": thread (" << tx << ", " << ty
                      << ") has " << field << " wrong; expected lane/warp/segment/seg_lane/%laneid "
                      << want.lane << "/" << want.warp << "/" << want.segment << "/"
                      << want.seg_lane << "/" << want.hw_lane << ", got " << g.lane << "/" << g.warp
                      << "/" << g.segment << "/" << g.seg_lane << "/" << g.hw_lane);
    }
  }
  SUCCEED();
  const std::string damage = d_out.guard_damage();
  if (!damage.empty())
    FAIL("stage " << stage().info.id << ", " << what << ": wrote outside the block's ids ("
                  << damage << ")");
}

}  // namespace

TEST_CASE("lane, warp and segment ids of 1D and 2D blocks match the formulas and %laneid",
          "[ids]") {
  struct shape {
    int x, y;
  };
  // Partial warps (5 x 7, 33 x 3, 7 x 33) included: the last warp of such a block is not full.
  for (shape s :
       {shape{32, 1}, shape{64, 1}, shape{96, 1}, shape{1024, 1}, shape{16, 4}, shape{8, 8},
        shape{4, 16}, shape{5, 7}, shape{33, 3}, shape{7, 33}, shape{32, 32}})
    for (int width : widths) check_ids(s.x, s.y, width);
}

namespace {

// An argument the form takes: any source lane for broadcast (wrapping: -64..95), offsets 0..31
// for up and down, either sign for rotate (-64..64), lane masks 0..31 for butterfly.
int random_arg(warp::shuffle_form form, course::test::sweep_rng &rng) {
  switch (form) {
    case warp::shuffle_form::broadcast: return int(rng.below(160)) - 64;
    case warp::shuffle_form::rotate: return int(rng.below(129)) - 64;
    default: return int(rng.below(warp::lanes));
  }
}

}  // namespace

// The seeded random sweep. Shuffles: six launches of a random number of warps (the last block of
// 8 warps partial), each warp a random case: form, argument (negative rotations and broadcast
// sources included), width 2..32, mask (full, random, a run of lanes, one lane, all but one,
// sparse, dense); input, output and cases misaligned on their own. Ids: 40 random block shapes,
// one- and two-dimensional, up to 1024 threads, each width, output misaligned. A failure names
// the case; the test main prints the replay line.
TEST_CASE("seeded random sweep: shuffle cases and thread ids", "[sweep]") {
  course::test::sweep_rng rng(course::fresh_seed());
  INFO("sweep seed " << rng.seed());
  for (int launch = 0; launch < 6; ++launch) {
    const std::size_t n_cases = std::max<std::size_t>(1, rng.awkward_size({8, 32}, 5000));
    std::vector<warp::shuffle_case> cases(n_cases);
    for (auto &c : cases) {
      c.form = warp::all_shuffle_forms[rng.below(std::size(warp::all_shuffle_forms))];
      c.arg = random_arg(c.form, rng);
      c.width = widths[rng.below(std::size(widths))];
      c.mask = rng.lane_mask();
    }
    shuffle_offsets at;
    at.in = rng.below(4);
    at.out = rng.below(4);
    at.cases = rng.below(4);
    INFO("shuffle launch " << launch);
    check_cases(cases, "random cases, " + std::to_string(n_cases) + " warps", at);
  }
  for (int c = 0; c < 40; ++c) {
    int x, y = 1;
    if (rng.chance(0.4)) {
      x = int(rng.between(1, 1024));  // one-dimensional
    } else {
      x = int(rng.between(1, 64));
      y = int(rng.between(1, 1024 / x));
    }
    const int width = widths[rng.below(std::size(widths))];
    INFO("ids case " << c);
    check_ids(x, y, width, rng.below(4));
  }
}
