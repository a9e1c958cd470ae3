// SPDX-License-Identifier: BSD-3-Clause
// Tests of every GPU force stage (02-07 and the multi-GPU 09). Each test program is built with one
// stage. The bodies are random (positions in [-1, 1]^3, masses in [0.5, 1.5]; the seed is printed
// on failure, COURSE_SEED replays). Every force is compared with the float64 host reference
// (host_nbody.h) by |f - ref| / sum_j |f_ij| <= nbody::error_bound(n) = 1e-5 + 2e-7 sqrt(n); the w
// component must be 0. Outputs are poisoned first (NaN bytes) and followed by a guard zone that
// must stay poisoned. Sizes: 1, 31, 1000, 4097 and (the [large] cases, which the sanitizer runs
// leave out) 65539, none a multiple of a block or a tile.
#include "host_nbody.h"
#include "nbody.h"

#include "common/memory.h"
#include "common/random_fill.h"
#include "harness/catch.h"
#include "harness/test_support.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

using course::test::guard_elements;

namespace {

constexpr float softening = 0.01f;
constexpr float softening2 = softening * softening;
const std::vector<std::size_t> sizes = {1, 31, 1000, 4097};
constexpr std::size_t large = 65539;

const nbody::stage &stage_under_test() { return course::test::stage_under_test<nbody::stage>(); }

struct problem {
  std::uint64_t seed;
  std::vector<float4> body;
  std::vector<nbody::force64> want;
};

// One random problem per size per test program run (the float64 reference of 65539 bodies takes
// a few seconds), the seed fresh each run.
const problem &problem_of(std::size_t n) {
  static std::map<std::size_t, problem> cache;
  auto it = cache.find(n);
  if (it != cache.end()) return it->second;
  problem p;
  p.seed = course::fresh_seed();
  p.body = nbody::random_bodies(n, p.seed);
  p.want = nbody::host_forces_f64(p.body.data(), n, softening2);
  return cache.emplace(n, std::move(p)).first->second;
}

// The stage's forces of `body`, through the entry point it has (device or pinned host memory).
// The output is poisoned first; the device output's guard zone is checked here.
std::vector<float4> run_stage(const std::vector<float4> &body, const nbody::config &cfg, float soft2 = softening2) {
  const auto &stage = stage_under_test();
  const std::size_t n = body.size();
  if (stage.forces_host) {
    course::host_buffer<float4> h_body(n + 1, course::host_memory::pinned), h_force(n + guard_elements,
                                                                                    course::host_memory::pinned);
    if (n) std::memcpy(h_body.get(), body.data(), n * sizeof(float4));
    course::test::poison_host(h_force.get(), h_force.size());
    stage.forces_host(h_force.get(), h_body.get(), n, soft2, cfg);
    std::vector<float4> got(h_force.get(), h_force.get() + n + guard_elements);
    if (course::test::first_written(got, n) != got.size()) FAIL("stage " << stage.info.id << ", n=" << n << ": wrote past the end");
    got.resize(n);
    return got;
  }
  course::device_buffer<float4> d_body(n + 1), d_force(n + guard_elements);
  course::test::poison_device(d_force.get(), d_force.size());
  course::test::copy_to_device(d_body.get(), body);
  stage.forces(d_force.get(), d_body.get(), n, soft2, cfg, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  auto got = course::test::copy_to_host(d_force.get(), n + guard_elements);
  if (course::test::first_written(got, n) != got.size()) FAIL("stage " << stage.info.id << ", n=" << n << ": wrote past the end");
  got.resize(n);
  return got;
}

std::string describe(std::size_t n, const nbody::config &cfg) {
  return "n=" + std::to_string(n) + " threads=" + std::to_string(cfg.threads) + " unroll=" + std::to_string(cfg.unroll) +
         " rows_per_thread=" + std::to_string(cfg.rows_per_thread) + " parts=" + std::to_string(cfg.parts) +
         " gpus=" + std::to_string(cfg.gpus) +
         (cfg.form == nbody::interaction_form::listing_14_1 ? " form=listing_14_1" : " form=mass_scaled");
}

void check_against_reference(const std::string &who, const std::vector<float4> &got, const problem &p) {
  const std::size_t n = p.body.size();
  const double bound = nbody::error_bound(n);
  INFO("seed " << p.seed << " (COURSE_SEED replays the run); bound " << bound);
  const auto r = course::test::check_elements(
      n, [&](std::size_t i) { return nbody::relative_error(got[i], p.want[i]); }, [](std::size_t) { return 0.0; },
      [&](std::size_t i, double err, double) { return std::isfinite(err) && err <= bound && got[i].w == 0.f; });
  if (!r.ok()) {
    const std::size_t i = r.first;
    FAIL("stage " << stage_under_test().info.id << ", " << who << ": " << r.wrong << " of " << n
                  << " forces wrong; first [" << i << "]: relative error " << r.actual << " > " << bound << " (got "
                  << got[i].x << ", " << got[i].y << ", " << got[i].z << ", w " << got[i].w << "; want " << p.want[i].x
                  << ", " << p.want[i].y << ", " << p.want[i].z << ")");
  }
  SUCCEED();
}

void check(std::size_t n, const nbody::config &cfg) {
  const problem &p = problem_of(n);
  check_against_reference(describe(n, cfg), run_stage(p.body, cfg), p);
}

}  // namespace

TEST_CASE("forces match the float64 reference at awkward sizes", "[nbody]") {
  for (std::size_t n : sizes) check(n, nbody::config{});
}

TEST_CASE("forces match the float64 reference at a large N", "[nbody][large]") {
  check(large, nbody::config{});
  if (stage_under_test().blocked) {
    for (int rows : {1, 2, 4, 8}) {
      nbody::config cfg;
      cfg.rows_per_thread = rows;
      check(large, cfg);
    }
  }
}

TEST_CASE("every block size the stages take", "[nbody]") {
  for (int threads : {32, 64, 96, 128, 256, 1024}) {
    nbody::config cfg;
    cfg.threads = threads;
    for (std::size_t n : {std::size_t(31), std::size_t(1000), std::size_t(4097)}) check(n, cfg);
  }
}

TEST_CASE("every unroll factor of the sweeps (tables 14.1 and 14.2)", "[nbody]") {
  if (!stage_under_test().unroll_sweep) return;
  for (int unroll : {1, 2, 4, 8, 16, 32}) {
    for (int threads : {64, 256}) {
      nbody::config cfg;
      cfg.unroll = unroll;
      cfg.threads = threads;
      for (std::size_t n : {std::size_t(31), std::size_t(4097)}) check(n, cfg);
    }
  }
}

TEST_CASE("every register blocking of stage 07, in both interaction forms", "[nbody]") {
  if (!stage_under_test().blocked) return;
  for (auto form : {nbody::interaction_form::mass_scaled, nbody::interaction_form::listing_14_1}) {
    for (int rows : {1, 2, 4, 8}) {
      for (int threads : {128, 256}) {
        for (int unroll : {8, 16, 32}) {
          nbody::config cfg;
          cfg.rows_per_thread = rows;
          cfg.threads = threads;
          cfg.unroll = unroll;
          cfg.form = form;
          for (std::size_t n : {std::size_t(1), std::size_t(1000), std::size_t(4097)}) check(n, cfg);
        }
      }
    }
  }
}

TEST_CASE("bodies of zero mass pull on no one and are pulled like any other", "[nbody]") {
  // Every third body massless (stage 07 stores those as a = 0, e^2 / m = 1 instead of dividing
  // by 0), and a tiny and a huge mass beside them.
  for (std::size_t n : {std::size_t(31), std::size_t(4097)}) {
    problem p;
    p.seed = course::fresh_seed();
    p.body = nbody::random_bodies(n, p.seed);
    for (std::size_t i = 0; i < n; i += 3) p.body[i].w = 0.f;
    p.body[1].w = 1e-30f;
    p.body[n - 1].w = 1e6f;
    p.want = nbody::host_forces_f64(p.body.data(), n, softening2);
    check_against_reference("n=" + std::to_string(n) + ", every third body massless", run_stage(p.body, nbody::config{}), p);
  }
}

TEST_CASE("the symmetric stage equals brute force", "[nbody][symmetric]") {
  // Every stage, and stage 06 (half the pairs, atomics) in particular: against the brute-force
  // float32 host code (listing 14.2) as well as the float64 reference, both within the bound.
  for (std::size_t n : {std::size_t(33), std::size_t(1000), std::size_t(4097)}) {
    const problem &p = problem_of(n);
    std::vector<float4> brute(n);
    nbody::host_forces_aos(brute.data(), p.body.data(), n, softening2);
    const auto got = run_stage(p.body, nbody::config{});
    const double bound = nbody::error_bound(n);
    for (std::size_t i = 0; i < n; ++i) {
      const double err = nbody::relative_difference(got[i], brute[i], p.want[i]);
      if (!(err <= bound)) FAIL("stage " << stage_under_test().info.id << ", n=" << n << ": force [" << i
                                         << "] differs from brute force by " << err << " > " << bound);
    }
  }
  SUCCEED();
}

namespace {
void check_splits(const std::vector<std::size_t> &ns) {
  int visible = 0;
  CUDA_CHECK(cudaGetDeviceCount(&visible));
  for (std::size_t n : ns) {
    const problem &p = problem_of(n);
    nbody::config one;
    one.parts = 1;
    one.gpus = 1;
    const auto single = run_stage(p.body, one);
    check_against_reference(describe(n, one), single, p);
    // 2, 3 and 5 parts dealt round-robin to the visible GPUs (on one GPU: all on it, one after the
    // other), and one part per GPU: the same code computes each row, so the forces are equal bit for bit.
    for (int parts : {0, 2, 3, 5}) {
      nbody::config cfg;
      cfg.parts = parts;
      const auto got = run_stage(p.body, cfg);
      for (std::size_t i = 0; i < n; ++i) {
        if (std::memcmp(&got[i], &single[i], sizeof(float4)) != 0)
          FAIL("stage 09, " << describe(n, cfg) << " on " << visible << " GPU(s): force [" << i << "] = (" << got[i].x
                            << ", " << got[i].y << ", " << got[i].z << ", " << got[i].w
                            << ") differs from the single-GPU run (" << single[i].x << ", " << single[i].y << ", "
                            << single[i].z << ", " << single[i].w << ")");
      }
    }
  }
  SUCCEED();
}
}  // namespace

TEST_CASE("the multi-GPU stage equals its single-GPU run for any split", "[nbody][multi]") {
  if (stage_under_test().forces_host) check_splits(sizes);
}

TEST_CASE("the multi-GPU stage equals its single-GPU run for any split, large N", "[nbody][multi][large]") {
  if (stage_under_test().forces_host) check_splits({large});
}

TEST_CASE("momentum is conserved over 100 leapfrog steps", "[nbody][momentum]") {
  // Every pair pulls equal and opposite, so sum m_i a_i = 0 but for rounding: after 100 steps of
  // dt = 1e-3 from rest, |P| must stay below 1e-4 of sum m_i |v_i| (the float32 sums round each
  // force by about 1e-6 of its scale; 100 steps of that are well inside 1e-4).
  const std::size_t n = 1000;
  const std::uint64_t seed = course::fresh_seed();
  INFO("seed " << seed);
  std::vector<float4> body = nbody::random_bodies(n, seed), vel(n, float4{0.f, 0.f, 0.f, 0.f}), accel;
  auto forces = [&](std::vector<float4> &a, const std::vector<float4> &b) { a = run_stage(b, nbody::config{}, 0.05f * 0.05f); };
  forces(accel, body);
  for (int step = 0; step < 100; ++step) nbody::leapfrog_step(body, vel, accel, 1e-3f, forces);
  const nbody::momentum p = nbody::total_momentum(body, vel);
  const double drift = std::sqrt(p.x * p.x + p.y * p.y + p.z * p.z);
  INFO("|P| = " << drift << ", sum m|v| = " << p.scale);
  CHECK(p.scale > 0);
  CHECK(drift <= 1e-4 * p.scale);
}

TEST_CASE("configurations the stages do not handle are refused, not miscomputed", "[nbody]") {
  const auto &stage = stage_under_test();
  std::vector<float4> body = nbody::random_bodies(64, 1);
  for (int threads : {0, 16, 33, 100, 2048}) {
    nbody::config cfg;
    cfg.threads = threads;
    INFO("threads " << threads);
    CHECK_THROWS(run_stage(body, cfg));
  }
  if (stage.unroll_sweep) {
    nbody::config cfg;
    cfg.unroll = 3;
    CHECK_THROWS(run_stage(body, cfg));
  }
  if (stage.blocked) {
    nbody::config cfg;
    cfg.rows_per_thread = 3;
    CHECK_THROWS(run_stage(body, cfg));
  }
}
