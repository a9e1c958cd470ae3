// SPDX-License-Identifier: BSD-3-Clause
// Host tests of the warp model (warp_model.h), the reference of the shuffle tests: no GPU needed.
// The model is checked against the examples the article works through, and against a second,
// independent formulation: the PTX ISA's shfl.sync pseudocode, which works on the bits of the
// operand the CUDA headers pass, ((32 - width) << 8) | clamp.
#include "warp.h"
#include "warp_model.h"

#include "harness/catch.h"

#include <array>

namespace {

using warp::shuffle_form;

// Lane `lane` of one full-mask shuffle of a warp whose lane k holds k.
int from(shuffle_form form, int arg, int width, int lane) {
  std::array<int, warp::lanes> in{};
  for (int k = 0; k < warp::lanes; ++k) in[k] = k;
  return *warp::model::shuffle({form, arg, width, warp::full_mask}, in.data(), lane);
}

// The PTX ISA's shfl.sync: b is the source lane or offset, c packs the segment mask (bits 8..12)
// and the clamp (bits 0..4); a source that fails the bound check leaves the lane its own value.
int ptx_source_lane(shuffle_form form, int lane, int arg, int width) {
  const bool idx = form == shuffle_form::broadcast || form == shuffle_form::rotate;
  const int b = form == shuffle_form::rotate ? lane % width + arg : arg;
  const int c = ((warp::lanes - width) << 8) | (form == shuffle_form::up ? 0 : 0x1f);
  const int bval = b & 0x1f, cval = c & 0x1f, segmask = (c >> 8) & 0x1f;
  const int max_lane = (lane & segmask) | (cval & ~segmask);
  const int min_lane = lane & segmask;
  int j = lane;
  bool ok = false;
  if (idx) j = min_lane | (bval & ~segmask), ok = j <= max_lane;
  else if (form == shuffle_form::up) j = lane - bval, ok = j >= max_lane;
  else if (form == shuffle_form::down) j = lane + bval, ok = j <= max_lane;
  else j = lane ^ bval, ok = j <= max_lane;
  return ok ? j : lane;
}

}  // namespace

TEST_CASE("the model reproduces the article's examples", "[model]") {
  // Broadcast from lane 3 with width 16: lanes 0..15 get lane 3's value, lanes 16..31 lane 19's.
  for (int lane = 0; lane < warp::lanes; ++lane)
    CHECK(from(shuffle_form::broadcast, 3, 16, lane) == (lane < 16 ? 3 : 19));
  // Shift up by 2: the two lowest lanes keep their own values; shift down by 2: the two highest.
  for (int lane = 0; lane < warp::lanes; ++lane) {
    CHECK(from(shuffle_form::up, 2, 32, lane) == (lane < 2 ? lane : lane - 2));
    CHECK(from(shuffle_form::down, 2, 32, lane) == (lane >= 30 ? lane : lane + 2));
  }
  // Rotate by 2 (and by -2): every lane changes, the ends wrap round.
  for (int lane = 0; lane < warp::lanes; ++lane) {
    CHECK(from(shuffle_form::rotate, 2, 32, lane) == (lane + 2) % 32);
    CHECK(from(shuffle_form::rotate, -2, 32, lane) == (lane + 30) % 32);
  }
  // Butterfly with mask 1: neighbours swap.
  for (int lane = 0; lane < warp::lanes; ++lane)
    CHECK(from(shuffle_form::butterfly, 1, 32, lane) == (lane ^ 1));
}

TEST_CASE("the model agrees with the PTX ISA's shfl.sync pseudocode", "[model]") {
  for (auto form : warp::all_shuffle_forms)
    for (int width = 2; width <= warp::lanes; width *= 2)
      for (int arg = form == shuffle_form::broadcast || form == shuffle_form::rotate ? -64 : 0;
           arg < 64; ++arg) {
        if ((form == shuffle_form::up || form == shuffle_form::down ||
             form == shuffle_form::butterfly) &&
            arg >= 32)
          break;  // offsets and lane masks are 5-bit fields: beyond 31 the intrinsics' result is
                  // not the model's concern
        for (int lane = 0; lane < warp::lanes; ++lane) {
          INFO(to_string(form) << " arg=" << arg << " width=" << width << " lane=" << lane);
          REQUIRE(warp::model::source_lane(form, lane, arg, width) ==
                  ptx_source_lane(form, lane, arg, width));
        }
      }
}

TEST_CASE("the model: lanes outside the mask keep their value; reading one is undefined",
          "[model]") {
  std::array<int, warp::lanes> in{};
  for (int k = 0; k < warp::lanes; ++k) in[k] = 100 + k;
  const warp::shuffle_case c{shuffle_form::down, 1, 32, 0x0000ffffu};
  CHECK(*warp::model::shuffle(c, in.data(), 3) == 104);
  CHECK_FALSE(warp::model::shuffle(c, in.data(), 15).has_value());  // lane 16 is not in the mask
  CHECK(*warp::model::shuffle(c, in.data(), 20) == 120);            // lane 20 takes no part
}

TEST_CASE("lane masks", "[model]") {
  CHECK(warp::model::lanemask_lt(0) == 0u);
  CHECK(warp::model::lanemask_le(0) == 1u);
  CHECK(warp::model::lanemask_lt(5) == 0x1fu);
  CHECK(warp::model::lanemask_gt(5) == 0xffffffc0u);
  CHECK(warp::model::lanemask_ge(31) == 0x80000000u);
  CHECK(warp::model::lanemask_le(31) == warp::full_mask);
  CHECK(warp::model::lanemask_gt(31) == 0u);
  for (int lane = 0; lane < warp::lanes; ++lane) {
    CHECK((warp::model::lanemask_lt(lane) | warp::model::lanemask_eq(lane) |
           warp::model::lanemask_gt(lane)) == warp::full_mask);
    CHECK((warp::model::lanemask_lt(lane) & warp::model::lanemask_ge(lane)) == 0u);
  }
}
