// SPDX-License-Identifier: BSD-3-Clause
// Tests of the rsqrt lab (lab_rsqrt_pipes.cu), every variant: the forces against the float64
// reference within nbody::error_bound(n), the bound every stage meets, at sizes below, at and past
// the tile and the block's 1024 rows (the self mask of the diagonal tiles, the column split),
// 0, 1, 31, 1000, 1025, 4097 and ([large]) 65539; massless and heavy bodies; arrays 1..3 float4s
// into their allocations; a non-blocking stream; the guards of test_nbody.cpp (heavy bodies past
// the input, poison around the output). The accuracy of the FMA-pipe root alone, over every float
// of one period, is a host test (test_host.cpp).
#include "host_nbody.h"
#include "lab_rsqrt_pipes.h"
#include "nbody.h"

#include "common/memory.h"
#include "common/random_fill.h"
#include "harness/catch.h"
#include "harness/test_guards.h"
#include "harness/test_support.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

using nbody::lab::rsqrt_variant;

constexpr float softening2 = 0.01f * 0.01f;
const float4 heavy_body = {0.5f, -0.25f, 0.75f, 1e6f};  // the input's guard (test_nbody.cpp)
constexpr std::size_t body_guard = 1024;

struct problem {
  std::uint64_t seed = 0;
  std::vector<float4> body;
  std::vector<nbody::force64> want;
};

problem make_problem(std::vector<float4> body, std::uint64_t seed) {
  problem p;
  p.seed = seed;
  p.body = std::move(body);
  p.want = nbody::host_forces_f64(p.body.data(), p.body.size(), softening2);
  return p;
}
problem make_problem(std::size_t n, std::uint64_t seed) {
  return make_problem(nbody::random_bodies(n, seed), seed);
}

struct call {
  std::size_t body_offset = 0, force_offset = 0;
  cudaStream_t stream = nullptr;
};

void check(const problem &p, rsqrt_variant v, const call &c = {}) {
  const std::size_t n = p.body.size();
  std::string who = std::string(nbody::lab::name(v)) + ", n=" + std::to_string(n);
  if (c.body_offset) who += " body offset " + std::to_string(c.body_offset);
  if (c.force_offset) who += " force offset " + std::to_string(c.force_offset);
  if (c.stream) who += " (non-blocking stream)";
  INFO(who << "; seed " << p.seed);
  auto d_body = course::test::guarded<float4>::input(n, c.body_offset, heavy_body, body_guard);
  d_body.upload(p.body);
  auto d_force = course::test::guarded<float4>::output(n, c.force_offset);
  nbody::lab::forces_rsqrt_variant(d_force.get(), d_body.get(), n, softening2, v, c.stream);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::string in_damage = d_body.guard_damage(), out_damage = d_force.guard_damage();
  if (!in_damage.empty()) FAIL(who << ": the bodies' guard changed (" << in_damage << ")");
  if (!out_damage.empty()) FAIL(who << ": wrote outside the forces (" << out_damage << ")");
  const auto got = d_force.download();
  const double bound = nbody::error_bound(n);
  const auto r = course::test::check_elements(
      n, [&](std::size_t i) { return nbody::relative_error(got[i], p.want[i]); },
      [](std::size_t) { return 0.0; },
      [&](std::size_t i, double err, double) {
        return std::isfinite(err) && err <= bound && got[i].w == 0.f;
      });
  if (!r.ok()) {
    const std::size_t i = r.first;
    FAIL(who << ": " << r.wrong << " of " << n << " forces wrong; first [" << i
             << "]: relative error " << r.actual << " > " << bound << " (got " << got[i].x << ", "
             << got[i].y << ", " << got[i].z << ", w " << got[i].w << ")");
  }
  SUCCEED();
}

}  // namespace

TEST_CASE("rsqrt lab: every variant matches the float64 reference", "[lab]") {
  for (std::size_t n : std::vector<std::size_t>{0, 1, 31, 256, 1000, 1025, 4097}) {
    const problem p = make_problem(n, course::fresh_seed());
    for (auto v : nbody::lab::all_rsqrt_variants) check(p, v);
  }
}

TEST_CASE("rsqrt lab: every variant at a large N", "[lab][large]") {
  const problem p = make_problem(65539, course::fresh_seed());
  for (auto v : nbody::lab::all_rsqrt_variants) check(p, v);
}

TEST_CASE("rsqrt lab: massless and heavy bodies", "[lab]") {
  // Massless bodies (a = 0: they must add exactly 0) beside masses of 10^-30 and 10^6: the
  // squared distances then span many exponents, which the FMA-pipe root's seed must follow.
  for (std::size_t n : {std::size_t(31), std::size_t(4097)}) {
    const std::uint64_t seed = course::fresh_seed();
    auto body = nbody::random_bodies(n, seed);
    for (std::size_t i = 0; i < n; i += 3) body[i].w = 0.f;
    body[1].w = 1e-30f;
    body[0].w = 1e6f;
    body[n - 1].w = 1e6f;
    const problem p = make_problem(std::move(body), seed);
    for (auto v : nbody::lab::all_rsqrt_variants) check(p, v);
  }
}

TEST_CASE("rsqrt lab: misaligned arrays and a non-blocking stream", "[lab]") {
  course::stream side;
  const problem p = make_problem(1001, course::fresh_seed());
  for (std::size_t offset : {std::size_t(1), std::size_t(3)})
    for (auto v : nbody::lab::all_rsqrt_variants) {
      call c;
      c.body_offset = offset;
      check(p, v, c);
      c.body_offset = 0;
      c.force_offset = offset;
      c.stream = side;
      check(p, v, c);
    }
}
