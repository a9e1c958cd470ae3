// SPDX-License-Identifier: BSD-3-Clause
// Host-only tests of the chapter's host side (no GPU needed): the body-body interaction of
// listing 14.1 on cases worked by hand, the float32 reference (listing 14.2) against the float64
// one within the bound every GPU stage is held to, the thread pool, and momentum conservation
// of the leapfrog integrator with the host forces.
#include "host_nbody.h"
#include "nbody.h"
#include "nbody_common.cuh"

#include "common/parallel.h"
#include "harness/catch.h"

#include <atomic>
#include <cmath>
#include <stdexcept>
#include <vector>

TEST_CASE("the interaction of two bodies, worked by hand", "[host]") {
  // Body 1 of mass 2 at distance 3 along x, softening 4: d^2 = 9 + 16 = 25, r^-3 = 1/125,
  // f = 2 * 3 / 125 = 0.048 along +x.
  double fx = 0, fy = 0, fz = 0;
  nbody::body_body_interaction<double>(fx, fy, fz, 1, 2, 3, 4, 2, 3, 2, 16);
  CHECK(std::fabs(fx - 0.048) <= 1e-15);
  CHECK(fy == 0);
  CHECK(fz == 0);
  // The self-interaction adds exactly 0 (dx = 0) thanks to the softening.
  float gx = 1, gy = 2, gz = 3;
  nbody::body_body_interaction<float>(gx, gy, gz, 0.5f, 0.25f, -1, 0.5f, 0.25f, -1, 7, 1e-4f);
  CHECK(gx == 1);
  CHECK(gy == 2);
  CHECK(gz == 3);
}

TEST_CASE("the float32 host reference is within the bound of the float64 one", "[host]") {
  for (std::size_t n : {std::size_t(1), std::size_t(31), std::size_t(1000), std::size_t(3001)}) {
    const auto body = nbody::random_bodies(n, 14 + n);
    std::vector<float4> f(n);
    nbody::host_forces_aos(f.data(), body.data(), n, 1e-4f);
    const auto want = nbody::host_forces_f64(body.data(), n, 1e-4f);
    double worst = 0;
    for (std::size_t i = 0; i < n; ++i) worst = std::max(worst, nbody::relative_error(f[i], want[i]));
    INFO("n=" << n << " worst relative error " << worst << ", bound " << nbody::error_bound(n));
    CHECK(worst <= nbody::error_bound(n));
  }
}

TEST_CASE("one body missing from a sum breaks the bound", "[host]") {
  // The bound is tight enough to see a stage that forgets a body (n = 1000 and 4097): nine
  // forces in ten move by more than the bound.
  for (std::size_t n : {std::size_t(1000), std::size_t(4097)}) {
    auto body = nbody::random_bodies(n, 7);
    const auto want = nbody::host_forces_f64(body.data(), n, 1e-4f);
    std::vector<float4> f(n);
    nbody::host_forces_aos(f.data(), body.data(), n - 1, 1e-4f);  // body n - 1 pulls on no one
    std::size_t broken = 0;
    for (std::size_t i = 0; i + 1 < n; ++i) broken += nbody::relative_error(f[i], want[i]) > nbody::error_bound(n);
    INFO("n=" << n << ": " << broken << " of " << n - 1 << " forces outside the bound");
    CHECK(broken > (n - 1) * 9 / 10);
  }
}

TEST_CASE("the thread pool runs every task once, on every worker, and rethrows", "[host]") {
  course::thread_pool pool(4);
  CHECK(pool.size() == 4);
  for (int round = 0; round < 20; ++round) {
    std::vector<std::atomic<int>> hits(1000);
    pool.run(hits.size(), [&](std::size_t t, unsigned w) {
      REQUIRE(w < 4);
      hits[t]++;
    });
    for (auto &h : hits) REQUIRE(h == 1);
  }
  pool.run(0, [](std::size_t, unsigned) {});
  CHECK_THROWS_AS(pool.run(100, [](std::size_t t, unsigned) {
    if (t == 57) throw std::runtime_error("task 57");
  }), std::runtime_error);
}

TEST_CASE("momentum is conserved over 100 leapfrog steps with the host forces", "[host]") {
  const std::size_t n = 500;
  std::vector<float4> body = nbody::random_bodies(n, 3), vel(n, float4{0.f, 0.f, 0.f, 0.f}), accel(n);
  auto forces = [&](std::vector<float4> &a, const std::vector<float4> &b) {
    nbody::host_forces_aos(a.data(), b.data(), b.size(), 0.05f * 0.05f);
  };
  forces(accel, body);
  for (int step = 0; step < 100; ++step) nbody::leapfrog_step(body, vel, accel, 1e-3f, forces);
  const nbody::momentum p = nbody::total_momentum(body, vel);
  const double drift = std::sqrt(p.x * p.x + p.y * p.y + p.z * p.z);
  INFO("|P| = " << drift << ", sum m|v| = " << p.scale << ", ratio " << drift / p.scale);
  CHECK(p.scale > 0);
  CHECK(drift <= 1e-4 * p.scale);
}
