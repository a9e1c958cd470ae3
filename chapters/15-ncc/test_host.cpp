// SPDX-License-Identifier: BSD-3-Clause
// Host tests of chapter 15: the scene generator (deterministic, instances where it says, relit
// copies unclipped) and the host references the GPU tests rely on.
#include "host_ncc.h"
#include "scene.h"

#include "harness/catch.h"

#include <cmath>

TEST_CASE("host sums and coefficient on a hand-checked example", "[ncc-host]") {
  course::gray_image img(3, 2);
  img.pixels = {1, 2, 3, 4, 5, 6};
  course::gray_image t(2, 2);
  t.pixels = {1, 0, 0, 1};
  const auto s = ncc::host_reference_sums(img, t);
  REQUIRE(s.out_w == 2);
  REQUIRE(s.out_h == 1);
  CHECK(s.sum_i[0] == 1 + 2 + 4 + 5);
  CHECK(s.sum_isq[1] == 4 + 9 + 25 + 36);
  CHECK(s.sum_it[1] == 2 + 6);
  // A window equal to the template up to gain and offset has coefficient 1.
  course::gray_image a(2, 2), b(2, 2);
  a.pixels = {10, 20, 30, 60};
  b.pixels = {25, 45, 65, 125};  // 2a + 5
  const auto sb = ncc::host_reference_sums(b, a);
  CHECK(std::fabs(ncc::host_coefficients(sb, ncc::stats_of(a))[0] - 1.0) < 1e-12);
  // Flat: 0.
  const course::gray_image flat(4, 4, 9);
  CHECK(ncc::host_coefficients(ncc::host_reference_sums(flat, a), ncc::stats_of(a))[0] == 0.0);
}

TEST_CASE("the scene: deterministic, instances inside and apart, relit copies exact",
          "[ncc-host]") {
  const auto s1 = ncc::make_scene(300, 246, 52, 52), s2 = ncc::make_scene(300, 246, 52, 52);
  CHECK(s1.image.pixels == s2.image.pixels);
  REQUIRE(s1.instances.size() == 4);
  for (std::size_t i = 0; i < s1.instances.size(); ++i) {
    const auto &p = s1.instances[i];
    CHECK(p.x >= 0);
    CHECK(p.y >= 0);
    CHECK(p.x + 52 <= 300);
    CHECK(p.y + 52 <= 246);
    for (std::size_t k = 0; k < i; ++k)
      CHECK((std::abs(p.x - s1.instances[k].x) >= 52 || std::abs(p.y - s1.instances[k].y) >= 52));
    // The planted pixels are round(gain * T + offset), unclipped.
    for (int y = 0; y < 52; ++y)
      for (int x = 0; x < 52; ++x) {
        const double v = p.gain * s1.templ.at(x, y) + p.offset;
        REQUIRE(v >= 0);
        REQUIRE(v <= 255);
        REQUIRE(int(s1.image.at(p.x + x, p.y + y)) == int(std::lround(v)));
      }
  }
  // Their coefficients, on the host: above 0.99.
  const auto sums = ncc::host_reference_sums(s1.image, s1.templ);
  const auto coef = ncc::host_coefficients(sums, ncc::stats_of(s1.templ));
  for (const auto &p : s1.instances)
    CHECK(coef[std::size_t(p.y) * std::size_t(sums.out_w) + std::size_t(p.x)] > 0.99);
  // A different seed, a different scene.
  CHECK(ncc::make_scene(300, 246, 52, 52, 99).image.pixels != s1.image.pixels);
}
