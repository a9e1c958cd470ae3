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
// - Images wide enough that stage 08 runs its 4-row blocks at 12x12 and 20x20, under the
//   sanitizers too (not [large]).
// - The seeded sweep ([sweep]): random image and template sizes, both modes, outputs misaligned.
// - The bank form (stages that have one, 10): K templates in one call, every plane against its
//   template's host reference, at K = 1, 3, 32, 8x8, 16x16 and 13x11, saturated pixels, flat
//   templates, the largest sums; and a bank sweep (tagged [sweep] too).
// Outputs are poisoned (NaN / -1) and surrounded by guards that must stay poisoned. The inputs
// have no guard rows: a valid window never reaches below the image, so a row read past the bottom
// can only feed outputs that are not written; memcheck (make sanitize) is what sees such a read,
// and the wrong variant 08_register_blocked.rows_unclamped checks that it does.
#include "host_ncc.h"
#include "ncc.h"
#include "scene.h"
#if NCC_HAVE_NPP
#include "npp_baseline.h"
#endif

#include "common/device.h"
#include "common/random.h"
#include "common/random_fill.h"
#include "harness/alloc_tracker.h"
#include "harness/catch.h"
#include "harness/leak_check.h"
#include "harness/sweep.h"
#include "harness/test_support.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

using course::test::guard_elements;

namespace {

constexpr double coef_bound = 2e-5;

const ncc::stage &stage_under_test() { return course::test::stage_under_test<ncc::stage>(); }

course::gray_image random_image(int w, int h, std::uint64_t seed, int lo = 0, int hi = 255) {
  course::gray_image img(w, h);
  for (std::size_t i = 0; i < img.pixels.size(); ++i)
    img.pixels[i] = std::uint8_t(course::random_int(seed, i, lo, hi));
  return img;
}

// Where a call writes: each output starts `offset` elements into its allocation (the
// coefficients: offset[0]; the sums: offset[0], [1], [2], each on its own), on `stream`.
struct placement {
  std::size_t offset[3] = {0, 0, 0};
  cudaStream_t stream = nullptr;
};

std::string describe(int w, int h, int tw, int th, const placement &at = placement{}) {
  std::string s = "image " + std::to_string(w) + "x" + std::to_string(h) + ", template " +
                  std::to_string(tw) + "x" + std::to_string(th);
  if (at.offset[0] || at.offset[1] || at.offset[2])
    s += ", output offsets " + std::to_string(at.offset[0]) + "/" + std::to_string(at.offset[1]) +
         "/" + std::to_string(at.offset[2]);
  if (at.stream) s += " (non-blocking stream)";
  return s;
}
std::string describe(const course::gray_image &img, const course::gray_image &t,
                     const placement &at = placement{}) {
  return describe(img.width, img.height, t.width, t.height, at);
}
std::string describe(const ncc::problem &p, const placement &at) {
  return describe(p.v().width, p.v().height, p.v().tw, p.v().th, at);
}

// Runs the stage for coefficients into a poisoned output placed as `at`; checks its guards;
// returns them.
std::vector<float> run_coefficients(const ncc::problem &p, ncc::path *taken = nullptr,
                                    const placement &at = placement{}) {
  auto d = course::test::guarded<float>::output(p.outputs(), at.offset[0]);
  ncc::output out;
  out.coef = d.get();
  const ncc::path path = stage_under_test().run(p, out, at.stream);
  if (taken) *taken = path;
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::string damage = d.guard_damage();
  if (!damage.empty())
    FAIL(describe(p, at) << ": coefficients written outside the output (" << damage << ")");
  return d.download();
}

struct device_sums {
  std::vector<int> sum[3];  // SumI, SumISq, SumIT
};
const char *const sum_names[] = {"SumI", "SumISq", "SumIT"};

// Runs the stage for the three sums into poisoned outputs placed as `at`; checks their guards.
device_sums run_sums(const ncc::problem &p, ncc::path *taken = nullptr,
                     const placement &at = placement{}) {
  const std::size_t n = p.outputs();
  auto a = course::test::guarded<int>::output(n, at.offset[0]),
       b = course::test::guarded<int>::output(n, at.offset[1]),
       c = course::test::guarded<int>::output(n, at.offset[2]);
  ncc::output out;
  out.sum_i = a.get(), out.sum_isq = b.get(), out.sum_it = c.get();
  const ncc::path path = stage_under_test().run(p, out, at.stream);
  if (taken) *taken = path;
  CUDA_CHECK(cudaDeviceSynchronize());
  const course::test::guarded<int> *outs[] = {&a, &b, &c};
  device_sums got;
  for (int s = 0; s < 3; ++s) {
    const std::string damage = outs[s]->guard_damage();
    if (!damage.empty())
      FAIL(describe(p, at) << ": " << sum_names[s] << " written outside the output (" << damage
                           << ")");
    got.sum[s] = outs[s]->download();
  }
  return got;
}

// The three sums, exact, against the host.
void compare_sums(const std::string &who, const device_sums &got, const ncc::host_sums &want) {
  const std::vector<std::int64_t> *wants[] = {&want.sum_i, &want.sum_isq, &want.sum_it};
  for (int s = 0; s < 3; ++s) {
    const std::size_t n = wants[s]->size();
    const auto r = course::test::check_elements(
        n, [&](std::size_t i) { return got.sum[s][i]; },
        [&](std::size_t i) { return double((*wants[s])[i]); },
        [](std::size_t, int g, double w) { return double(g) == w; });
    if (!r.ok())
      FAIL(course::test::describe(stage_under_test().info.id, who + " " + sum_names[s], n, r));
  }
}

// The coefficients within coef_bound of the float64 ones.
void compare_coefficients(const std::string &who, const std::vector<float> &got,
                          const std::vector<double> &want) {
  const auto r = course::test::check_elements(
      got.size(), [&](std::size_t i) { return got[i]; }, [&](std::size_t i) { return want[i]; },
      [](std::size_t, float g, double w) { return course::test::close(g, w, 1.0, coef_bound); });
  if (!r.ok())
    FAIL(course::test::describe(stage_under_test().info.id,
                                who + " coefficients (bound " + std::to_string(coef_bound) + ")",
                                got.size(), r));
}

void check_sums(const course::gray_image &img, const course::gray_image &t,
                ncc::path *taken = nullptr) {
  ncc::problem p(img, t);
  compare_sums(describe(img, t), run_sums(p, taken), ncc::host_reference_sums(img, t));
  SUCCEED();
}

void check_coefficients(const course::gray_image &img, const course::gray_image &t) {
  ncc::problem p(img, t);
  const auto got = run_coefficients(p);
  compare_coefficients(describe(img, t), got,
                       ncc::host_coefficients(ncc::host_reference_sums(img, t), p.stats()));
  SUCCEED();
}

struct size_case {
  int w, h, tw, th;
};
const size_case sizes[] = {
    {64, 48, 8, 8},
    {173, 91, 16, 16},
    {301, 247, 17, 13},
    {97, 131, 5, 23},
    {300, 246, 52, 52},
    {33, 31, 1, 1},
    {40, 40, 40, 40},
    {129, 65, 31, 7},
    {1, 1, 1, 1},
    {70, 3, 9, 3},
    // The widths of the sizes stages 06..08 compile in, with another height: the generic instance.
    {100, 60, 16, 20},
    {64, 80, 8, 16},
    {90, 70, 32, 12},
    // Every other square size they compile in (8 and 16 are above), on odd image sizes.
    {61, 45, 12, 12},
    {88, 77, 20, 20},
    {70, 66, 24, 24},
    {97, 83, 28, 28},
    {120, 65, 32, 32},
};

}  // namespace

TEST_CASE("sums equal the host's exactly", "[ncc][sums]") {
  for (const auto &c : sizes) {
    const std::uint64_t seed = course::fresh_seed();
    INFO("seed " << seed);
    check_sums(random_image(c.w, c.h, seed), random_image(c.tw, c.th, seed + 1));
  }
}

TEST_CASE("coefficients match the float64 reference", "[ncc][coef]") {
  for (const auto &c : sizes) {
    const std::uint64_t seed = course::fresh_seed();
    INFO("seed " << seed);
    check_coefficients(random_image(c.w, c.h, seed), random_image(c.tw, c.th, seed + 1));
  }
  // Low contrast: a narrow range of values, where the book's float sums lose the most digits.
  const std::uint64_t seed = course::fresh_seed();
  check_coefficients(random_image(200, 120, seed, 120, 124),
                     random_image(16, 16, seed + 1, 120, 124));
}

TEST_CASE(
    "the coefficient's integer terms at their largest: windows of 363 and 364 pixels, half 0, half 255",
    "[ncc][coef]") {
  // N SumIT - SumI SumT and N SumISq - SumI^2 are at most N^2 x 127.5^2, reached by a window of
  // half 0 and half 255 that equals the template: just under 2^31 at N = 363 (the largest N whose
  // 32-bit form is exact), 2.15e9 at 364, where only 64 bits hold them. Each template has exactly
  // N / 2 pixels of 255 (rounded down) and is planted in an image of random 0s and 255s; its
  // window's coefficient is 1, the others anything in [-1, 1].
  const std::uint64_t seed = course::fresh_seed();
  INFO("seed " << seed);
  for (const size_case c : {size_case{90, 40, 33, 11}, size_case{40, 90, 11, 33},
                            size_case{80, 50, 28, 13}, size_case{50, 80, 13, 28}}) {
    const int n = c.tw * c.th;
    course::gray_image t(c.tw, c.th, 0);
    std::vector<int> at(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) at[std::size_t(i)] = i;
    for (int i = n - 1; i > 0; --i)  // a shuffle: which pixels are 255
      std::swap(
          at[std::size_t(i)],
          at[std::size_t(course::random_int(seed + std::uint64_t(n), std::uint64_t(i), 0, i))]);
    for (int i = 0; i < n / 2; ++i) t.pixels[std::size_t(at[std::size_t(i)])] = 255;
    course::gray_image img(c.w, c.h);
    for (std::size_t i = 0; i < img.pixels.size(); ++i)
      img.pixels[i] = course::random_int(seed, i, 0, 1) ? 255 : 0;
    const int x0 = (c.w - c.tw) / 2, y0 = (c.h - c.th) / 3;
    for (int y = 0; y < c.th; ++y)
      for (int x = 0; x < c.tw; ++x) img.at(x0 + x, y0 + y) = t.at(x, y);
    check_coefficients(img, t);
    check_sums(img, t);
  }
}

TEST_CASE("every planted instance is found, the relit copies too", "[ncc][scene]") {
  for (const size_case c : {size_case{400, 300, 52, 52}, size_case{256, 192, 16, 16},
                            size_case{301, 247, 17, 13}, size_case{200, 160, 8, 8}}) {
    const ncc::scene s = ncc::make_scene(c.w, c.h, c.tw, c.th);
    REQUIRE(s.instances.size() == 4);
    ncc::problem p(s.image, s.templ);
    const auto coef = run_coefficients(p);
    for (const auto &inst : s.instances) {
      const float got =
          coef[std::size_t(inst.y) * std::size_t(p.v().out_w()) + std::size_t(inst.x)];
      INFO(describe(s.image, s.templ)
           << ": instance at (" << inst.x << "," << inst.y << ") lit " << inst.gain << " x + "
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

TEST_CASE("templates too large for constant or shared memory: right answers, fallback said",
          "[ncc][fallback]") {
  const std::string id = stage_under_test().info.id;
  const bool constant_stage = id >= "02" && id < "07";
  const bool shared_stage = id >= "03" && id < "07";
  // Stage 10 runs its int8 MMA kernel only from code compiled for SM 8.0 or newer (on a T4, or
  // from a build whose older PTX the driver compiles for this GPU, it takes the fallback), and
  // only where its band of shared memory fits the GPU's opt-in limit.
  const bool mma_stage = id >= "10";
  const bool mma_code = course::device_code_version() >= 80;
  const long long optin = course::query_device().shared_per_block_optin;
  INFO("code of this build run here: compute_" << course::device_code_version()
                                               << ", opt-in shared memory " << optin << " bytes");
  // 130 x 130 = 16900 pixels: over the 16384 bytes of constant memory the stages 02..06 use.
  // (Stage 10's shared memory: 4 copies of a band of 137 rows of 76 words, 10440 words apart, the
  // band's column sums (2 x 8 x 257 words) and its window sums (2 x 8 x 128): 191,680 bytes, over
  // the 99 KB of RTX cards.)
  {
    ncc::path taken;
    check_sums(random_image(150, 140, 7), random_image(130, 130, 8), &taken);
    CHECK((taken == ncc::path::tex_tex_fallback) ==
          (constant_stage || (mma_stage && (!mma_code || optin < 191680))));
  }
  // 8000 x 2: fits constant memory, but its tile is (32 + 7999) x (8 + 1) bytes > 48 KB. (Stage
  // 10's: 4 copies of 9 rows of 2036 words, 18344 words apart, the column sums (2 x 8 x 8127
  // words) and the window sums: 821,824 bytes, over every GPU's opt-in limit.)
  {
    ncc::path taken;
    check_sums(random_image(8040, 12, 9), random_image(8000, 2, 10), &taken);
    CHECK((taken == ncc::path::tex_tex_fallback) ==
          (shared_stage || (mma_stage && (!mma_code || optin < 821824))));
  }
}

TEST_CASE("the larger image of the benchmark", "[ncc][large]") {
  const std::uint64_t seed = course::fresh_seed();
  INFO("seed " << seed);
  check_sums(random_image(1024, 1024, seed), random_image(16, 16, seed + 1));
}

TEST_CASE("grids large enough for stage 08's blocks of 4 rows", "[ncc][rows]") {
  const std::uint64_t seed = course::fresh_seed();
  INFO("seed " << seed);
  // Stage 08 takes 4 rows a thread at 12x12 to 20x20 where its grid leaves each SM 3 blocks or more
  // (2 on smaller images): 64 x 7 = 448 blocks of 4-row threads here, past the 3 x 132 of an H200
  // or H100 and the 3 x 148 of a B200. Outside [large], so the sanitizers run these kernels too.
  check_sums(random_image(8192, 120, seed), random_image(12, 12, seed + 1));
  check_sums(random_image(8192, 120, seed + 2), random_image(20, 20, seed + 3));
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
  for (const size_case c :
       {size_case{256, 200, 16, 16}, size_case{173, 91, 8, 8}, size_case{300, 246, 52, 52}}) {
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
    for (std::size_t i = 0; i < ours.size(); ++i)
      worst = std::fmax(worst, std::fabs(double(ours[i]) - theirs[i]));
    INFO("largest difference " << worst);
    CHECK(worst <= 1e-3);
  }
}
#endif

TEST_CASE("a stage allocates nothing it does not free", "[ncc][memory]") {
  // A first call on a problem may fill the problem's caches (stages 07 and 08: the shifted
  // template; stage 09: FFT plans and buffers); later calls, in either mode, allocate nothing more,
  // and the problem takes all of it with it when it goes. Counted in this process only
  // (harness/alloc_tracker.h; cuFFT's own work areas, allocated inside the shared library, are
  // not counted). The second problem runs the fallback of stages 02..06.
  const auto &stage = stage_under_test();
  REQUIRE(course::test::allocation_tracking_active());
  const size_case cases[] = {{173, 91, 16, 16}, {150, 140, 130, 130}};
  for (const auto &c : cases) {
    const auto img = random_image(c.w, c.h, 21), t = random_image(c.tw, c.th, 22);
    const std::size_t n = std::size_t(c.w - c.tw + 1) * std::size_t(c.h - c.th + 1);
    course::device_buffer<float> coef(n);
    course::device_buffer<int> a(n), b(n), d(n);
    ncc::output coefficients, sums;
    coefficients.coef = coef.get();
    sums.sum_i = a.get(), sums.sum_isq = b.get(), sums.sum_it = d.get();
    const auto at_start = course::test::live_allocations();
    {
      ncc::problem p(img, t);
      auto call = [&] {
        stage.run(p, coefficients, nullptr);
        stage.run(p, sums, nullptr);
      };
      course::test::check_no_net_allocations("stage " + stage.info.id + ", " + describe(img, t),
                                             call);
    }
    const auto at_end = course::test::live_allocations();
    INFO("stage " << stage.info.id << ", " << describe(img, t) << ": before the problem "
                  << course::test::describe(at_start) << "; after it is destroyed "
                  << course::test::describe(at_end));
    CHECK(at_end == at_start);
  }
}

// The seeded random sweep: images of 1..400 x 1..300 pixels (sizes near multiples of 4, 8, 16,
// 32 and 128: the dp4a words, the tiles and the pitch), templates of 1..64 a side (square and
// not, 1 wide or 1 high, the sizes stages 06..08 compile in, the whole image), both modes on
// each problem in either order (sums exact, coefficients within the bound), the outputs 0..3
// elements into their allocations each on its own, some calls on a non-blocking stream; pixels
// uniform, of low contrast, flat or saturated, templates cut from the image. About one case in
// eight is a fallback case: a template over the constant memory (130x130-ish), one that fits it
// as bytes but not with its rows padded to words (127x129: stages 05 and 06 only), or one whose
// shared tile exceeds 48 KB (5440..8192 x 2). The host reference costs out_w out_h w h: each case
// is held to 1.5e7.
TEST_CASE("seeded random sweep over image and template sizes, modes and output alignments",
          "[sweep]") {
  course::test::sweep_rng rng(course::fresh_seed());
  INFO("sweep seed " << rng.seed());
  const std::vector<std::size_t> boundaries = {4, 8, 16, 32, 128};
  const std::int64_t work_cap = 15000000;
  const int compiled[] = {8, 12, 16, 20, 24, 28, 32};
  course::stream side;
  const int cases = 60;
  for (int c = 0; c < cases; ++c) {
    int w, h, tw, th;
    std::string kind;
    if (c % 8 == 7) {
      switch ((c / 8) % 3) {
        case 0:  // over 16384 template bytes: stages 02..06 fall back
          tw = int(rng.between(120, 181));
          th = int(
              rng.between(std::size_t((16384 + tw) / tw), std::size_t(std::min(181, 32768 / tw))));
          kind = ", over the constant memory";
          break;
        case 1:  // 16383 bytes or fewer, but over 16384 with each row padded to whole words
          tw = rng.pick({127, 126, 125});
          th = tw == 127 ? 129 : tw == 126 ? 130 : 131;
          kind = ", over the constant memory with rows padded to words";
          break;
        default:  // the shared tile (32 + w - 1) x (8 + h - 1) over 48 KB
          tw = int(rng.between(5440, 8192));
          th = 2;
          kind = ", shared tile over 48 KB";
          break;
      }
      w = tw + int(rng.below(40));
      h = th + int(rng.below(10));
    } else {
      w = std::max<int>(1, int(rng.awkward_size(boundaries, 400)));
      h = std::max<int>(1, int(rng.awkward_size(boundaries, 300)));
      const int most_w = std::min(w, 64), most_h = std::min(h, 64);
      const std::size_t shape = rng.below(10);
      if (shape == 0) {  // 1 wide or 1 high
        tw = rng.chance(0.5) ? 1 : int(rng.between(1, std::size_t(most_w)));
        th = tw == 1 && rng.chance(0.5) ? int(rng.between(1, std::size_t(most_h))) : 1;
      } else if (shape < 4) {  // a size compiled in (square), where it fits
        const int s = compiled[rng.below(std::size(compiled))];
        tw = std::min(s, most_w), th = std::min(s, most_h);
      } else if (shape == 4) {  // as large as the image allows: few outputs, maybe one
        tw = most_w, th = most_h;
      } else {
        tw = int(rng.between(1, std::size_t(most_w)));
        th = rng.chance(0.3) ? std::min(tw, most_h) : int(rng.between(1, std::size_t(most_h)));
      }
    }
    // The host reference's cost: fewer output rows, then columns, where it is over the cap.
    const std::int64_t per_output = std::int64_t(tw) * th;
    std::int64_t out_w = w - tw + 1, out_h = h - th + 1;
    if (out_w * out_h * per_output > work_cap)
      out_h = std::max<std::int64_t>(1, work_cap / (out_w * per_output));
    if (out_w * out_h * per_output > work_cap)
      out_w = std::max<std::int64_t>(1, work_cap / (out_h * per_output));
    w = int(out_w) + tw - 1, h = int(out_h) + th - 1;

    const std::uint64_t seed = rng.bits();
    course::gray_image img, t;
    const std::size_t content = rng.below(10);
    if (content < 6) {
      img = random_image(w, h, seed);
      kind += ", pixels 0..255";
    } else if (content == 6) {
      const int lo = int(rng.between(0, 250));
      img = random_image(w, h, seed, lo, lo + 4);
      kind += ", pixels " + std::to_string(lo) + ".." + std::to_string(lo + 4);
    } else if (content == 7) {
      img = random_image(w, h, seed, 250, 255);
      for (std::size_t i = 0; i < img.pixels.size(); i += 2) img.pixels[i] = 255;
      kind += ", pixels near 255";
    } else {
      img = random_image(w, h, seed);
      const int v = int(rng.below(256));
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w / 2; ++x) img.at(x, y) = std::uint8_t(v);
      kind += ", left half flat";
    }
    const std::size_t from = rng.below(8);
    if (from < 2) {  // cut from the image: a coefficient of 1 where it was cut
      const int x = int(rng.below(std::size_t(w - tw + 1))),
                y = int(rng.below(std::size_t(h - th + 1)));
      t = img.crop(x, y, tw, th);
      kind += ", template cut at (" + std::to_string(x) + "," + std::to_string(y) + ")";
    } else if (from == 2) {
      t = course::gray_image(tw, th, std::uint8_t(rng.below(256)));
      kind += ", flat template";
    } else {
      t = random_image(tw, th, seed + 1);
    }

    placement at;
    for (auto &o : at.offset) o = rng.below(4);
    if (rng.chance(0.25)) at.stream = side;
    const std::string who =
        describe(img, t, at) + kind + " (case seed " + std::to_string(seed) + ")";
    INFO("case " << c << ": " << who);
    ncc::problem p(img, t);
    const auto want = ncc::host_reference_sums(img, t);
    const auto want_coef = ncc::host_coefficients(want, p.stats());
    const bool sums_first = rng.chance(0.5);
    for (int mode = 0; mode < 2; ++mode) {
      if ((mode == 0) == sums_first) compare_sums(who, run_sums(p, nullptr, at), want);
      else compare_coefficients(who, run_coefficients(p, nullptr, at), want_coef);
    }
  }
  SUCCEED();
}

// --- the bank form: K templates in one call (stages that have it: 10_tensor_bank) ---------------
// Every plane against the single-template host reference of its template: SumI and SumISq
// (written once) and each template's SumIT exactly, each template's coefficients within the
// bound. Stages without a bank form pass these cases without running anything.
namespace {

const ncc::bank_stage *bank_under_test() {
  const auto &banks = course::registered<ncc::bank_stage>();
  return banks.empty() ? nullptr : &banks.front();
}

std::vector<course::gray_image> random_bank(int k, int tw, int th, std::uint64_t seed) {
  std::vector<course::gray_image> bank;
  for (int i = 0; i < k; ++i) bank.push_back(random_image(tw, th, seed + 1 + std::uint64_t(i)));
  return bank;
}

std::string describe_bank(const course::gray_image &img,
                          const std::vector<course::gray_image> &bank,
                          const placement &at = placement{}) {
  return describe(img, bank.front(), at) + ", bank of " + std::to_string(bank.size());
}

// Runs the bank in both modes into poisoned, guarded outputs placed as `at` and checks every plane.
void check_bank(const ncc::bank_stage &stage, const course::gray_image &img,
                const std::vector<course::gray_image> &bank, const std::string &kind = "",
                const placement &at = placement{}, bool sums_first = true) {
  ncc::bank_problem b(img, bank);
  const std::size_t n = b.outputs(), K = bank.size();
  const std::string who = describe_bank(img, bank, at) + kind;
  std::vector<ncc::host_sums> want;
  for (const auto &t : bank) want.push_back(ncc::host_reference_sums(img, t));
  for (int mode = 0; mode < 2; ++mode) {
    if ((mode == 0) == sums_first) {
      auto si = course::test::guarded<int>::output(n, at.offset[0]),
           sisq = course::test::guarded<int>::output(n, at.offset[1]),
           sit = course::test::guarded<int>::output(K * n, at.offset[2]);
      ncc::bank_output o;
      o.sum_i = si.get(), o.sum_isq = sisq.get(), o.sum_it = sit.get();
      stage.run(b, o, at.stream);
      CUDA_CHECK(cudaDeviceSynchronize());
      const course::test::guarded<int> *outs[] = {&si, &sisq, &sit};
      for (int s = 0; s < 3; ++s) {
        const std::string damage = outs[s]->guard_damage();
        if (!damage.empty())
          FAIL(who << ": " << sum_names[s] << " written outside the output (" << damage << ")");
      }
      device_sums got;
      got.sum[0] = si.download(), got.sum[1] = sisq.download();
      const std::vector<int> all = sit.download();
      for (std::size_t k = 0; k < K; ++k) {
        got.sum[2].assign(all.begin() + std::ptrdiff_t(k * n),
                          all.begin() + std::ptrdiff_t((k + 1) * n));
        compare_sums(who + ", template " + std::to_string(k), got, want[k]);
      }
    } else {
      auto c = course::test::guarded<float>::output(K * n, at.offset[0]);
      ncc::bank_output o;
      o.coef = c.get();
      stage.run(b, o, at.stream);
      CUDA_CHECK(cudaDeviceSynchronize());
      const std::string damage = c.guard_damage();
      if (!damage.empty())
        FAIL(who << ": coefficients written outside the output (" << damage << ")");
      const std::vector<float> all = c.download();
      for (std::size_t k = 0; k < K; ++k) {
        const std::vector<float> plane(all.begin() + std::ptrdiff_t(k * n),
                                       all.begin() + std::ptrdiff_t((k + 1) * n));
        compare_coefficients(who + ", template " + std::to_string(k), plane,
                             ncc::host_coefficients(want[k], b.stats(int(k))));
      }
    }
  }
}

}  // namespace

TEST_CASE("a bank of templates: every plane equals its template's reference", "[ncc][bank]") {
  const ncc::bank_stage *stage = bank_under_test();
  if (!stage) {
    SUCCEED("no bank form in this stage");
    return;
  }
  // K = 1, 3 and 32 (one n-tile mostly padding; one full block of 32), templates 8x8 and 16x16
  // (whole chunks of 32 pixels) and 13x11 (rows padded to 16, the last chunk half a row pair);
  // images whose outputs are no multiple of the 64 x 8 band.
  const size_case cases[] = {{173, 91, 8, 8}, {131, 67, 16, 16}, {200, 45, 13, 11}};
  for (int k : {1, 3, 32})
    for (const auto &c : cases) {
      const std::uint64_t seed = course::fresh_seed();
      INFO("seed " << seed);
      check_bank(*stage, random_image(c.w, c.h, seed), random_bank(k, c.tw, c.th, seed + 100));
    }
}

TEST_CASE("a bank at the extremes: saturated pixels, flat templates, the largest sums",
          "[ncc][bank][extreme]") {
  const ncc::bank_stage *stage = bank_under_test();
  if (!stage) {
    SUCCEED("no bank form in this stage");
    return;
  }
  const std::uint64_t seed = course::fresh_seed();
  INFO("seed " << seed);
  // Pixels 0 or 255 only, in image and templates; among the templates a flat 255, a flat 0 (no
  // defined coefficient: 0, as everywhere in the chapter) and one full-range. 11 templates: two
  // n-tiles, the second mostly padding.
  auto saturated = [](int w, int h, std::uint64_t s) {
    course::gray_image img(w, h);
    for (std::size_t i = 0; i < img.pixels.size(); ++i)
      img.pixels[i] = course::random_int(s, i, 0, 1) ? 255 : 0;
    return img;
  };
  for (const size_case c :
       {size_case{150, 77, 16, 16}, size_case{97, 50, 13, 11}, size_case{70, 33, 8, 8}}) {
    std::vector<course::gray_image> bank;
    for (int k = 0; k < 8; ++k) bank.push_back(saturated(c.tw, c.th, seed + 10 + std::uint64_t(k)));
    bank.push_back(course::gray_image(c.tw, c.th, 255));
    bank.push_back(course::gray_image(c.tw, c.th, 0));
    bank.push_back(random_image(c.tw, c.th, seed + 30));
    check_bank(*stage, saturated(c.w, c.h, seed), bank, ", pixels 0/255, flat templates 255 and 0");
  }
  // A flat image: every plane 0, never NaN.
  {
    ncc::bank_problem b(course::gray_image(90, 40, 200), random_bank(5, 12, 9, seed + 40));
    course::device_buffer<float> c(5 * b.outputs());
    ncc::bank_output o;
    o.coef = c.get();
    stage->run(b, o, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    for (float v : course::test::copy_to_host(c.get(), c.size())) REQUIRE(v == 0.0f);
  }
  // The largest sums: 181 x 181 pixels of 254/255 against templates of 254/255 and 255, SumIT
  // up to 32761 x 65025 = 2.13e9, just under 2^31 (the 32-bit accumulators must not wrap).
  {
    auto bright = [](int w, int h, std::uint64_t s) {
      course::gray_image img(w, h);
      for (std::size_t i = 0; i < img.pixels.size(); ++i)
        img.pixels[i] = std::uint8_t(course::random_int(s, i, 254, 255));
      return img;
    };
    std::vector<course::gray_image> bank = {bright(181, 181, seed + 50),
                                            course::gray_image(181, 181, 255)};
    check_bank(*stage, bright(200, 190, seed + 51), bank,
               ", the largest template, pixels near 255");
  }
}

TEST_CASE("a bank: one size only, not empty; repeated calls allocate nothing", "[ncc][bank]") {
  const ncc::bank_stage *stage = bank_under_test();
  if (!stage) {
    SUCCEED("no bank form in this stage");
    return;
  }
  const auto img = random_image(100, 60, 61);
  std::vector<course::gray_image> mixed = {random_image(8, 8, 62), random_image(8, 9, 63)};
  CHECK_THROWS_AS(ncc::bank_problem(img, mixed), std::invalid_argument);
  CHECK_THROWS_AS(ncc::bank_problem(img, std::vector<course::gray_image>{}), std::invalid_argument);
  REQUIRE(course::test::allocation_tracking_active());
  const auto at_start = course::test::live_allocations();
  {
    ncc::bank_problem b(img, random_bank(9, 16, 16, 64));
    course::device_buffer<float> coef(9 * b.outputs());
    course::device_buffer<int> a(b.outputs()), s(b.outputs()), d(9 * b.outputs());
    ncc::bank_output coefficients, sums;
    coefficients.coef = coef.get();
    sums.sum_i = a.get(), sums.sum_isq = s.get(), sums.sum_it = d.get();
    course::test::check_no_net_allocations("stage " + stage->info.id + ", a bank of 9", [&] {
      stage->run(b, coefficients, nullptr);
      stage->run(b, sums, nullptr);
    });
  }
  CHECK(course::test::live_allocations() == at_start);
}

// The bank's seeded sweep: K of 1..40, templates of 1..40 a side (the row paddings 4, 8, 16, 32,
// 64 and their edges), images near multiples of the band (64 x 8) and of the words; pixels
// uniform, low contrast, near 255 or half flat; some templates flat or cut from the image; the
// outputs misaligned on their own, some calls on a non-blocking stream, both modes in either
// order. Each case is held to 2e7 multiply-adds of host reference.
TEST_CASE("seeded random sweep of template banks", "[sweep][bank]") {
  const ncc::bank_stage *stage = bank_under_test();
  if (!stage) {
    SUCCEED("no bank form in this stage");
    return;
  }
  course::test::sweep_rng rng(course::fresh_seed());
  INFO("sweep seed " << rng.seed());
  const std::vector<std::size_t> boundaries = {4, 8, 16, 32, 64};
  course::stream side;
  for (int c = 0; c < 24; ++c) {
    const int K =
        rng.chance(0.3) ? int(rng.pick({1, 8, 9, 16, 24, 32, 33})) : int(rng.between(1, 40));
    int tw =
        rng.chance(0.4) ? int(rng.pick({1, 4, 5, 8, 9, 16, 17, 32, 33})) : int(rng.between(1, 40));
    int th = rng.chance(0.5) ? tw : int(rng.between(1, 40));
    int w = std::max<int>(tw, int(rng.awkward_size(boundaries, 300)));
    int h = std::max<int>(th, int(rng.awkward_size(boundaries, 200)));
    const std::int64_t cap = 20000000, per_output = std::int64_t(K) * tw * th;
    std::int64_t out_w = w - tw + 1, out_h = h - th + 1;
    if (out_w * out_h * per_output > cap)
      out_h = std::max<std::int64_t>(1, cap / (out_w * per_output));
    if (out_w * out_h * per_output > cap)
      out_w = std::max<std::int64_t>(1, cap / (out_h * per_output));
    w = int(out_w) + tw - 1, h = int(out_h) + th - 1;
    const std::uint64_t seed = rng.bits();
    std::string kind;
    course::gray_image img;
    const std::size_t content = rng.below(8);
    if (content < 5) {
      img = random_image(w, h, seed);
    } else if (content == 5) {
      const int lo = int(rng.between(0, 250));
      img = random_image(w, h, seed, lo, lo + 4);
      kind += ", pixels " + std::to_string(lo) + ".." + std::to_string(lo + 4);
    } else if (content == 6) {
      img = random_image(w, h, seed, 250, 255);
      kind += ", pixels near 255";
    } else {
      img = random_image(w, h, seed);
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w / 2; ++x) img.at(x, y) = 7;
      kind += ", left half flat";
    }
    std::vector<course::gray_image> bank = random_bank(K, tw, th, seed);
    for (auto &t : bank) {
      const std::size_t what = rng.below(10);
      if (what == 0) t = course::gray_image(tw, th, std::uint8_t(rng.below(256)));
      else if (what == 1)
        t = img.crop(int(rng.below(std::size_t(w - tw + 1))),
                     int(rng.below(std::size_t(h - th + 1))), tw, th);
    }
    placement at;
    for (auto &o : at.offset) o = rng.below(4);
    if (rng.chance(0.25)) at.stream = side;
    INFO("case " << c << " (case seed " << seed << ")");
    check_bank(*stage, img, bank, kind + " (case seed " + std::to_string(seed) + ")", at,
               rng.chance(0.5));
  }
  SUCCEED();
}
