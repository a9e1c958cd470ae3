// SPDX-License-Identifier: BSD-3-Clause
// Tests of every NCC stage. Each test program is built with one stage.
//
// - Sums (SumI, SumISq, SumIT) equal the host's 64-bit sums exactly, for every stage, on random
//   images (seed printed on failure; COURSE_SEED replays) at square, odd and non-square sizes.
// - Coefficients within 2e-5 (absolute; they lie in [-1, 1]) of the host's float64 ones computed
//   from the exact sums. The device's error is below 1e-6 (ncc_common.cuh); the bound leaves room.
// - The generated scene: every planted copy of the template, the relit ones included, is found at
//   its position with a coefficient > 0.99.
// - Flat windows and flat templates give 0, never NaN.
// - Templates that do not fit constant memory, or whose image tile does not fit shared memory,
//   still give the right answer (the book's stages fall back to texture-texture; they must say so).
// - Where NPP is present: NPP's NormLevel coefficients agree with the stage's within 1e-3.
// Outputs are poisoned (NaN / -1) and followed by a guard zone that must stay poisoned.
#include "host_ncc.h"
#include "ncc.h"
#include "scene.h"
#if NCC_HAVE_NPP
#include "npp_baseline.h"
#endif

#include "common/random.h"
#include "common/random_fill.h"
#include "harness/catch.h"
#include "harness/test_support.h"

#include <cmath>
#include <string>
#include <vector>

using course::test::guard_elements;

namespace {

constexpr double coef_bound = 2e-5;

const ncc::stage &stage_under_test() { return course::test::stage_under_test<ncc::stage>(); }

course::gray_image random_image(int w, int h, std::uint64_t seed, int lo = 0, int hi = 255) {
  course::gray_image img(w, h);
  for (std::size_t i = 0; i < img.pixels.size(); ++i) img.pixels[i] = std::uint8_t(course::random_int(seed, i, lo, hi));
  return img;
}

std::string describe(const course::gray_image &img, const course::gray_image &t) {
  return "image " + std::to_string(img.width) + "x" + std::to_string(img.height) + ", template " +
         std::to_string(t.width) + "x" + std::to_string(t.height);
}

// Runs the stage for coefficients; checks the guard zone; returns them.
std::vector<float> run_coefficients(const ncc::problem &p, ncc::path *taken = nullptr) {
  const std::size_t n = p.outputs();
  course::device_buffer<float> d(n + guard_elements);
  course::test::poison_device(d.get(), d.size());
  ncc::output out;
  out.coef = d.get();
  const ncc::path path = stage_under_test().run(p, out, nullptr);
  if (taken) *taken = path;
  CUDA_CHECK(cudaDeviceSynchronize());
  auto got = course::test::copy_to_host(d.get(), d.size());
  const std::size_t written = course::test::first_written(got, n);
  if (written != got.size()) FAIL("wrote into the guard zone, at element " << written - n << " past the end");
  got.resize(n);
  return got;
}

// The three sums, exact, against the host.
void check_sums(const course::gray_image &img, const course::gray_image &t, ncc::path *taken = nullptr) {
  const std::string who = describe(img, t);
  ncc::problem p(img, t);
  const std::size_t n = p.outputs();
  course::device_buffer<int> a(n + guard_elements), b(n + guard_elements), c(n + guard_elements);
  for (auto *d : {&a, &b, &c}) course::test::poison_device(d->get(), d->size());
  ncc::output out;
  out.sum_i = a.get(), out.sum_isq = b.get(), out.sum_it = c.get();
  const ncc::path path = stage_under_test().run(p, out, nullptr);
  if (taken) *taken = path;
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto want = ncc::host_reference_sums(img, t);
  const char *names[] = {"SumI", "SumISq", "SumIT"};
  const std::vector<std::int64_t> *wants[] = {&want.sum_i, &want.sum_isq, &want.sum_it};
  course::device_buffer<int> *gots[] = {&a, &b, &c};
  for (int s = 0; s < 3; ++s) {
    const auto got = course::test::copy_to_host(gots[s]->get(), gots[s]->size());
    const std::size_t written = course::test::first_written(got, n);
    if (written != got.size()) FAIL(who << ": " << names[s] << " written into the guard zone");
    const auto r = course::test::check_elements(
        n, [&](std::size_t i) { return got[i]; }, [&](std::size_t i) { return double((*wants[s])[i]); },
        [](std::size_t, int g, double w) { return double(g) == w; });
    if (!r.ok()) FAIL(course::test::describe(stage_under_test().info.id, who + " " + names[s], n, r));
  }
  SUCCEED();
}

void check_coefficients(const course::gray_image &img, const course::gray_image &t) {
  const std::string who = describe(img, t) + " coefficients (bound " + std::to_string(coef_bound) + ")";
  ncc::problem p(img, t);
  const auto got = run_coefficients(p);
  const auto want = ncc::host_coefficients(ncc::host_reference_sums(img, t), p.stats());
  const auto r = course::test::check_elements(
      got.size(), [&](std::size_t i) { return got[i]; }, [&](std::size_t i) { return want[i]; },
      [](std::size_t, float g, double w) { return course::test::close(g, w, 1.0, coef_bound); });
  if (!r.ok()) FAIL(course::test::describe(stage_under_test().info.id, who, got.size(), r));
  SUCCEED();
}

struct size_case {
  int w, h, tw, th;
};
const size_case sizes[] = {
    {64, 48, 8, 8}, {173, 91, 16, 16}, {301, 247, 17, 13}, {97, 131, 5, 23}, {300, 246, 52, 52},
    {33, 31, 1, 1}, {40, 40, 40, 40}, {129, 65, 31, 7},  {1, 1, 1, 1},     {70, 3, 9, 3},
};

}  // namespace

TEST_CASE("sums equal the host's exactly", "[ncc][sums]") {
  for (const auto &c : sizes) {
    const std::uint64_t seed = course::fresh_seed();
    INFO("seed " << seed << " (COURSE_SEED replays the run)");
    check_sums(random_image(c.w, c.h, seed), random_image(c.tw, c.th, seed + 1));
  }
}

TEST_CASE("coefficients match the float64 reference", "[ncc][coef]") {
  for (const auto &c : sizes) {
    const std::uint64_t seed = course::fresh_seed();
    INFO("seed " << seed << " (COURSE_SEED replays the run)");
    check_coefficients(random_image(c.w, c.h, seed), random_image(c.tw, c.th, seed + 1));
  }
  // Low contrast: a narrow range of values, where the book's float sums lose the most digits.
  const std::uint64_t seed = course::fresh_seed();
  check_coefficients(random_image(200, 120, seed, 120, 124), random_image(16, 16, seed + 1, 120, 124));
}

TEST_CASE("every planted instance is found, the relit copies too", "[ncc][scene]") {
  for (const size_case c : {size_case{400, 300, 52, 52}, size_case{256, 192, 16, 16}, size_case{301, 247, 17, 13},
                            size_case{200, 160, 8, 8}}) {
    const ncc::scene s = ncc::make_scene(c.w, c.h, c.tw, c.th);
    REQUIRE(s.instances.size() == 4);
    ncc::problem p(s.image, s.templ);
    const auto coef = run_coefficients(p);
    for (const auto &inst : s.instances) {
      const float got = coef[std::size_t(inst.y) * std::size_t(p.v().out_w()) + std::size_t(inst.x)];
      INFO(describe(s.image, s.templ) << ": instance at (" << inst.x << "," << inst.y << ") lit " << inst.gain << " x + "
                                      << inst.offset << ": coefficient " << got);
      CHECK(got > 0.99f);
    }
    check_sums(s.image, s.templ);
  }
}

TEST_CASE("flat windows and flat templates give 0, not NaN", "[ncc][flat]") {
  const course::gray_image flat(90, 70, 77);
  const auto tex = random_image(12, 9, 3);
  ncc::problem p1(flat, tex);
  for (float c : run_coefficients(p1)) REQUIRE(c == 0.0f);
  const auto img = random_image(90, 70, 4);
  ncc::problem p2(img, course::gray_image(12, 9, 200));
  for (float c : run_coefficients(p2)) REQUIRE(c == 0.0f);
  // Half flat, half textured: the flat windows 0, the others finite.
  course::gray_image half = random_image(64, 64, 5);
  for (int y = 0; y < 64; ++y)
    for (int x = 0; x < 32; ++x) half.at(x, y) = 9;
  ncc::problem p3(half, random_image(8, 8, 6));
  const auto c3 = run_coefficients(p3);
  for (int y = 0; y < p3.v().out_h(); ++y)
    for (int x = 0; x < p3.v().out_w(); ++x) {
      const float c = c3[std::size_t(y) * std::size_t(p3.v().out_w()) + std::size_t(x)];
      REQUIRE(std::isfinite(c));
      if (x + 8 <= 32) REQUIRE(c == 0.0f);
    }
}

TEST_CASE("templates too large for constant or shared memory: right answers, fallback said", "[ncc][fallback]") {
  const std::string id = stage_under_test().info.id;
  const bool constant_stage = id >= "02" && id < "07";
  const bool shared_stage = id >= "03" && id < "07";
  // 130 x 130 = 16900 pixels: over the 16384 bytes of constant memory the stages 02..06 use.
  {
    ncc::path taken;
    check_sums(random_image(150, 140, 7), random_image(130, 130, 8), &taken);
    CHECK((taken == ncc::path::tex_tex_fallback) == constant_stage);
  }
  // 8000 x 2: fits constant memory, but its tile is (32 + 7999) x (8 + 1) bytes > 48 KB.
  {
    ncc::path taken;
    check_sums(random_image(8040, 12, 9), random_image(8000, 2, 10), &taken);
    CHECK((taken == ncc::path::tex_tex_fallback) == shared_stage);
  }
}

TEST_CASE("the larger image of the benchmark", "[ncc][large]") {
  const std::uint64_t seed = course::fresh_seed();
  INFO("seed " << seed);
  check_sums(random_image(1024, 1024, seed), random_image(16, 16, seed + 1));
}

TEST_CASE("calls with two problems alive keep their templates apart", "[ncc][reuse]") {
  const auto img = random_image(120, 80, 11);
  const auto t1 = random_image(16, 16, 12), t2 = random_image(16, 16, 13);
  ncc::problem p1(img, t1), p2(img, t2);
  const auto w1 = ncc::host_coefficients(ncc::host_reference_sums(img, t1), p1.stats());
  const auto w2 = ncc::host_coefficients(ncc::host_reference_sums(img, t2), p2.stats());
  for (int round = 0; round < 2; ++round) {
    const auto g1 = run_coefficients(p1), g2 = run_coefficients(p2);
    for (std::size_t i = 0; i < g1.size(); ++i) {
      REQUIRE(std::fabs(g1[i] - w1[i]) <= coef_bound);
      REQUIRE(std::fabs(g2[i] - w2[i]) <= coef_bound);
    }
  }
}

#if NCC_HAVE_NPP
TEST_CASE("NPP's NormLevel coefficients agree with the stage's", "[ncc][npp]") {
  for (const size_case c : {size_case{256, 200, 16, 16}, size_case{173, 91, 8, 8}, size_case{300, 246, 52, 52}}) {
    const std::uint64_t seed = course::fresh_seed();
    INFO("seed " << seed << ", " << c.w << "x" << c.h << " template " << c.tw << "x" << c.th);
    const auto img = random_image(c.w, c.h, seed), t = random_image(c.tw, c.th, seed + 1);
    ncc::problem p(img, t);
    const auto ours = run_coefficients(p);
    course::device_buffer<float> d(p.outputs());
    ncc::npp_baseline npp(p);
    npp.run(d.get(), nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    const auto theirs = course::test::copy_to_host(d.get(), d.size());
    double worst = 0;
    for (std::size_t i = 0; i < ours.size(); ++i) worst = std::fmax(worst, std::fabs(double(ours[i]) - theirs[i]));
    INFO("largest difference " << worst);
    CHECK(worst <= 1e-3);
  }
}
#endif
