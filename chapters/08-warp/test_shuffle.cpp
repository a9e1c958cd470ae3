// SPDX-License-Identifier: BSD-3-Clause
// Tests of stage 01 (shuffle forms): every form, width and offset against the host model of a
// warp (warp_model.h), with the full mask and with partial ones; and the lane and segment ids of
// one- and two-dimensional blocks against the formulas and against the hardware's %laneid.
// Inputs are fresh random values, distinct within each warp (the seed is printed on failure;
// COURSE_SEED replays).
#include "warp.h"
#include "warp_model.h"

#include "common/memory.h"
#include "common/random.h"
#include "common/random_fill.h"
#include "harness/catch.h"
#include "harness/test_support.h"

#include <sstream>
#include <string>
#include <vector>

using course::test::guard_elements;

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
  os << to_string(c.form) << " arg=" << c.arg << " width=" << c.width << " mask=0x" << std::hex << c.mask;
  return os.str();
}

// Runs the cases, one warp each, and checks every lane where the model defines the result.
void check_cases(const std::vector<warp::shuffle_case> &cases, const std::string &what) {
  const std::uint64_t seed = course::fresh_seed();
  const std::size_t n = cases.size() * warp::lanes;
  // Random high bits and the lane in the low five: no two lanes of a warp hold the same value,
  // so a lane that read the wrong source always shows.
  std::vector<int> in(n);
  for (std::size_t i = 0; i < n; ++i)
    in[i] = static_cast<int>((static_cast<std::uint32_t>(course::random_bits(seed, i)) & ~31u) | (i % warp::lanes));
  course::device_buffer<int> d_in(n), d_out(n + guard_elements);
  course::device_buffer<warp::shuffle_case> d_cases(cases.size());
  course::test::copy_to_device(d_in.get(), in);
  course::test::copy_to_device(d_cases.get(), cases);
  course::test::poison_device(d_out.get(), n + guard_elements);
  stage().shuffle(d_out.get(), d_in.get(), d_cases.get(), static_cast<int>(cases.size()));
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto got = course::test::copy_to_host(d_out.get(), n + guard_elements);

  const auto model = [&](std::size_t i) {
    return warp::model::shuffle(cases[i / warp::lanes], &in[i - i % warp::lanes], static_cast<int>(i % warp::lanes));
  };
  auto report = course::test::check_elements(
      n, [&](std::size_t i) { return got[i]; },
      [&](std::size_t i) { return model(i).value_or(got[i]); },  // undefined: whatever it got
      [](std::size_t, int g, double want) { return g == want; });
  INFO("seed " << seed << " (COURSE_SEED replays the run)");
  if (!report.ok()) {
    const auto &c = cases[report.first / warp::lanes];
    const int lane = static_cast<int>(report.first % warp::lanes);
    FAIL(course::test::describe(stage().info.id, what, n, report)
         << "\n  that is lane " << lane << " of the warp doing " << describe(c) << ", which should read lane "
         << warp::model::source_lane(c.form, lane, c.arg, c.width) << (c.mask >> lane & 1u ? "" : " (its own: not in the mask)"));
  }
  SUCCEED();  // one assertion per checked call, so the summary counts them
  const std::size_t past = course::test::first_written(got, n);
  if (past < got.size()) FAIL("stage " << stage().info.id << ", " << what << ": wrote past the last warp, at index " << past);
}

std::vector<warp::shuffle_case> cases_of(warp::shuffle_form form, const std::vector<unsigned> &masks) {
  std::vector<warp::shuffle_case> cases;
  for (unsigned mask : masks)
    for (int width : widths)
      for (int arg : args_of(form)) cases.push_back({form, arg, width, mask});
  return cases;
}

}  // namespace

TEST_CASE("each shuffle form matches the warp model for every width and offset (full mask)", "[shuffle]") {
  for (auto form : warp::all_shuffle_forms)
    check_cases(cases_of(form, {warp::full_mask}), std::string("form=") + to_string(form) + ", full mask");
}

TEST_CASE("shuffles with partial masks: lanes outside keep their value, lanes inside read what is defined",
          "[shuffle][mask]") {
  std::vector<unsigned> masks = {0x0000ffffu, 0xffff0000u, 0x55555555u, 0xaaaaaaaau, 0x0f0f0f0fu,
                                 0x80000001u, 0x00000001u, 0xfffffffeu, 0x7fffffffu};
  const std::uint64_t seed = course::fresh_seed();
  for (std::uint64_t k = 0; k < 4; ++k) masks.push_back(static_cast<unsigned>(course::random_bits(seed, k)));
  INFO("random masks from seed " << seed);
  for (auto form : warp::all_shuffle_forms)
    check_cases(cases_of(form, masks), std::string("form=") + to_string(form) + ", partial masks");
}

TEST_CASE("lane, warp and segment ids of 1D and 2D blocks match the formulas and %laneid", "[ids]") {
  struct shape {
    int x, y;
  };
  // Partial warps (5 x 7, 33 x 3, 7 x 33) included: the last warp of such a block is not full.
  for (shape s : {shape{32, 1}, shape{64, 1}, shape{96, 1}, shape{1024, 1}, shape{16, 4}, shape{8, 8}, shape{4, 16},
                  shape{5, 7}, shape{33, 3}, shape{7, 33}, shape{32, 32}}) {
    for (int width : widths) {
      const std::size_t n = std::size_t(s.x) * s.y;
      course::device_buffer<warp::thread_ids> d_out(n + guard_elements);
      course::test::poison_device(d_out.get(), n + guard_elements);
      stage().ids(d_out.get(), s.x, s.y, width);
      CUDA_CHECK(cudaDeviceSynchronize());
      const auto got = course::test::copy_to_host(d_out.get(), n + guard_elements);
      const std::string what = "block " + std::to_string(s.x) + " x " + std::to_string(s.y) + ", width " +
                               std::to_string(width);
      for (int y = 0; y < s.y; ++y) {
        for (int x = 0; x < s.x; ++x) {
          const int linear = y * s.x + x;
          const warp::thread_ids want{linear % warp::lanes, linear / warp::lanes, linear % warp::lanes / width,
                                      linear % warp::lanes % width, linear % warp::lanes};
          const warp::thread_ids &g = got[linear];
          const char *field = g.lane != want.lane           ? "lane"
                              : g.warp != want.warp         ? "warp"
                              : g.segment != want.segment   ? "segment"
                              : g.seg_lane != want.seg_lane ? "seg_lane"
                              : g.hw_lane != want.hw_lane   ? "hw_lane (%laneid)"
                                                            : nullptr;
          if (field)
            FAIL("stage " << stage().info.id << ", " << what << ": thread (" << x << ", " << y << ") has " << field
                          << " wrong; expected lane/warp/segment/seg_lane/%laneid " << want.lane << "/" << want.warp
                          << "/" << want.segment << "/" << want.seg_lane << "/" << want.hw_lane << ", got " << g.lane
                          << "/" << g.warp << "/" << g.segment << "/" << g.seg_lane << "/" << g.hw_lane);
        }
      }
      SUCCEED();
      const std::size_t past = course::test::first_written(got, n);
      if (past < got.size()) FAIL("stage " << stage().info.id << ", " << what << ": wrote past the block, at " << past);
    }
  }
}
