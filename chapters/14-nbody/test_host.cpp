// SPDX-License-Identifier: BSD-3-Clause
// Host-only tests of the chapter's host side (no GPU needed): the body-body interaction of
// listing 14.1 on cases worked by hand, the float32 reference (listing 14.2) against the float64
// one within the bound every GPU stage is held to, the thread pool, and momentum conservation
// of the leapfrog integrator with the host forces; and the float32 sums of one row's terms in
// random orders (what the symmetric-atomics lab's atomicAdds do) against that bound; the rsqrt
// lab's FMA-pipe x^(-3/2) over every float of one period.
#include "host_nbody.h"
#include "lab_rsqrt_pipes.h"
#include "nbody.h"
#include "nbody_common.cuh"

#include "common/parallel.h"
#include "harness/catch.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
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
    for (std::size_t i = 0; i < n; ++i)
      worst = std::max(worst, nbody::relative_error(f[i], want[i]));
    INFO("n=" << n << " worst relative error " << worst << ", bound " << nbody::error_bound(n));
    CHECK(worst <= nbody::error_bound(n));
  }
}

TEST_CASE("a row's terms summed in float in random orders stay within the bound", "[host]") {
  // The symmetric-atomics lab (lab_symmetric_atomics.cu) adds every term of a force into global
  // memory with atomicAdd, in an order the hardware picks. Each addition rounds by at most half
  // an ulp of the running sum, itself at most sum_j |f_ij|: the worst case over all orders is
  // (n - 1) 2^-24 of the scale (2.4e-4 at n = 4097, above the bound), but the roundings of an
  // arbitrary order are as independent as those of listing 14.2's fixed one and grow like
  // sqrt(n). Here the float32 terms of sampled rows (computed as the lab computes them) are
  // summed in 16 random orders each, against the float64 reference, and the worst must stay
  // within half of nbody::error_bound(n), the bound the lab's GPU tests apply.
  for (std::size_t n : {std::size_t(1000), std::size_t(4097), std::size_t(16384)}) {
    const auto body = nbody::random_bodies(n, 20 + n);
    const float soft2 = 1e-4f;
    std::mt19937_64 rng(n);
    std::vector<float> tx(n), ty(n), tz(n);
    std::vector<std::size_t> order(n);
    double worst = 0;
    for (std::size_t i = 0; i < n; i += n / 32) {
      const auto want = nbody::host_force_f64(body.data(), n, i, soft2);
      for (std::size_t j = 0; j < n; ++j) {
        tx[j] = ty[j] = tz[j] = 0.f;
        nbody::body_body_interaction<float>(tx[j], ty[j], tz[j], body[i].x, body[i].y, body[i].z,
                                            body[j].x, body[j].y, body[j].z, body[j].w, soft2);
        order[j] = j;
      }
      for (int shuffle = 0; shuffle < 16; ++shuffle) {
        std::shuffle(order.begin(), order.end(), rng);
        float fx = 0.f, fy = 0.f, fz = 0.f;
        for (std::size_t j : order) fx += tx[j], fy += ty[j], fz += tz[j];
        worst = std::max(worst, nbody::relative_error(float4{fx, fy, fz, 0.f}, want));
      }
    }
    std::printf("float32 sums in random orders, n = %zu: worst relative error %.2g (bound %.2g)\n",
                n, worst, nbody::error_bound(n));
    INFO("n=" << n << " worst relative error over random orders " << worst << ", bound "
              << nbody::error_bound(n));
    CHECK(worst <= 0.5 * nbody::error_bound(n));
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
    for (std::size_t i = 0; i + 1 < n; ++i)
      broken += nbody::relative_error(f[i], want[i]) > nbody::error_bound(n);
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
  CHECK_THROWS_AS(pool.run(100,
                           [](std::size_t t, unsigned) {
                             if (t == 57) throw std::runtime_error("task 57");
                           }),
                  std::runtime_error);
}

TEST_CASE("momentum is conserved over 100 leapfrog steps with the host forces", "[host]") {
  const std::size_t n = 500;
  std::vector<float4> body = nbody::random_bodies(n, 3), vel(n, float4{0.f, 0.f, 0.f, 0.f}),
                      accel(n);
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

TEST_CASE("the rsqrt lab's FMA-pipe x^(-3/2) is as accurate as MUFU.RSQ cubed", "[host]") {
  // The seed scales exactly with x's exponent (x 4 -> y / 2), so one period [1, 4) holds every
  // error; host fmaf and the GPU's FFMA round alike. 4.2e-7 is the measured worst case
  // (lab_rsqrt_pipes.h), below MUFU.RSQ cubed (about 7e-7) and far below error_bound's 1e-5.
  double worst = 0;
  for (float x = 1.f; x < 4.f; x = std::nextafter(x, 5.f)) {
    const double want = std::pow(double(x), -1.5);
    worst = std::max(worst, std::fabs(nbody::lab::rsqrt_cubed_fma(x) / want - 1));
  }
  INFO("worst relative error over [1, 4): " << worst);
  CHECK(worst <= 4.2e-7);
  // Other periods: the same error, float for float, from 2^-80 to 2^82 (x^(-3/2) a normal float).
  for (int k = -40; k <= 40; ++k)
    for (float m : {1.f, 1.37f, 2.f, 3.99f}) {
      const float x = std::ldexp(m, 2 * k);
      const double got = nbody::lab::rsqrt_cubed_fma(x), want = std::pow(double(x), -1.5);
      INFO("x = " << x);
      CHECK(std::fabs(got / want - 1) <= 4.2e-7);
    }
}
