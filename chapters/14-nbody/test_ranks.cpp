// SPDX-License-Identifier: BSD-3-Clause
// Tests of stage 11 (ranks). Run alone, the program is one rank (MPI starts a singleton world);
// under mpirun it is as many ranks as mpirun starts, and every rank runs every test case (each
// one is collective) and checks the same gathered results. COURSE_RANKS_TRANSPORT=mpi selects
// the host-staged transport, so that several ranks can share one GPU; the default is NCCL where
// the build has it (mpi under the sanitizers). A transport that cannot run here (NCCL with fewer
// GPUs than ranks on a host) prints COURSE_SKIP with the reason. What is checked, at awkward sizes
// (n = 1 and 5 leave ranks empty; none is a multiple of a tile):
//   - after k leapfrog steps, the positions against the host leapfrog driven by stage 08's forces
//     (nbody::leapfrog_step), within what the chapter's force bound allows k steps to move them;
//   - the final forces against the float64 sums of the final positions (nbody::error_bound);
//   - on several ranks, the same run on one rank (MPI_COMM_SELF), within the same bounds.
#include "host_nbody.h"
#include "nbody.h"
#include "ranks.h"

#include "common/check.h"
#include "common/memory.h"
#include "harness/catch.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using nbody::ranks::state;
using nbody::ranks::team;
using nbody::ranks::transport;

constexpr float softening = 0.05f, softening2 = softening * softening, dt = 1e-3f;

transport chosen_transport() {
  // Under compute-sanitizer (harness/sanitize.sh sets COURSE_SANITIZER) the stage's own kernels
  // and copies are what is checked, with the host-staged transport unless NCCL is asked for: the
  // tools would otherwise also report on NCCL's internal kernels and its cached allocations.
  transport t =
      std::getenv("COURSE_SANITIZER") ? transport::mpi : nbody::ranks::default_transport();
  if (const char *s = std::getenv("COURSE_RANKS_TRANSPORT")) {
    std::string why;
    if (!nbody::ranks::parse_transport(s, t, why)) FAIL("COURSE_RANKS_TRANSPORT: " << why);
  }
  return t;
}

// The world's ranks with the chosen transport, or why they cannot run here (printed once as a
// COURSE_SKIP line: CTest reports the test as skipped).
bool world_can_run(transport how) {
  nbody::ranks::start_mpi();
  const std::string why = nbody::ranks::cannot_run(MPI_COMM_WORLD, how);
  if (why.empty()) return true;
  int rank = 0;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  if (rank == 0) std::printf("COURSE_SKIP: %s\n", why.c_str());
  return false;
}

// Stage 08, the chapter's best single-GPU stage, linked in as the reference.
const nbody::stage &stage_08() {
  for (const auto &s : course::registered<nbody::stage>())
    if (s.info.id == "08_mass_scaled") return s;
  throw std::logic_error("the stage-11 tests link stage 08's solution as their reference");
}

state start(std::size_t n, std::uint64_t seed) {
  state s;
  s.body = nbody::random_bodies(n, seed);
  // A random velocity too, so that a slice integrated from the wrong rows shows at once.
  s.vel.resize(n);
  std::mt19937_64 rng(seed ^ 0x5eedu);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (auto &v : s.vel) v = float4{u(rng), u(rng), u(rng), 0.f};
  return s;
}

// k leapfrog steps on the host, the forces from stage 08 on this rank's GPU.
state reference_run(const state &from, int steps) {
  const std::size_t n = from.body.size();
  state s = from;
  course::device_buffer<float4> d_body(std::max<std::size_t>(n, 1)),
      d_force(std::max<std::size_t>(n, 1));
  nbody::config cfg;
  cfg.rows_per_thread = 4, cfg.threads = 256, cfg.unroll = 16;
  auto forces = [&](std::vector<float4> &a, const std::vector<float4> &b) {
    CUDA_CHECK(cudaMemcpy(d_body.get(), b.data(), n * sizeof(float4), cudaMemcpyHostToDevice));
    stage_08().forces(d_force.get(), d_body.get(), n, softening2, cfg, nullptr);
    CUDA_CHECK(cudaMemcpy(a.data(), d_force.get(), n * sizeof(float4), cudaMemcpyDeviceToHost));
  };
  s.accel.resize(n);
  forces(s.accel, s.body);
  for (int k = 0; k < steps; ++k) nbody::leapfrog_step(s.body, s.vel, s.accel, dt, forces);
  return s;
}

// Two runs of k steps from the same start agree when each body's positions differ by no more than
// forces within the chapter's bound can move it in k steps (sum over the steps of k dt^2 times
// the force error), twice for the two runs' errors, plus a few roundings of the position.
void require_same_run(const state &got, const state &want, const std::vector<nbody::force64> &f0,
                      int steps, const char *what) {
  const std::size_t n = want.body.size();
  REQUIRE(got.body.size() == n);
  const double bound = nbody::error_bound(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double tol = 2.0 * steps * steps * double(dt) * dt * bound * f0[i].scale + 1e-6 * steps;
    const double d = std::max({std::fabs(double(got.body[i].x) - want.body[i].x),
                               std::fabs(double(got.body[i].y) - want.body[i].y),
                               std::fabs(double(got.body[i].z) - want.body[i].z)});
    INFO(what << ": body " << i << " of " << n << " after " << steps << " steps");
    REQUIRE(d <= tol);
    REQUIRE(got.body[i].w == want.body[i].w);
  }
}

// The final forces of a run against the float64 sums of its own final positions.
void require_forces_right(const state &s) {
  const std::size_t n = s.body.size();
  REQUIRE(s.accel.size() == n);
  const auto want = nbody::host_forces_f64(s.body.data(), n, softening2);
  for (std::size_t i = 0; i < n; ++i) {
    INFO("force on body " << i << " of " << n);
    REQUIRE(nbody::relative_error(s.accel[i], want[i]) <= nbody::error_bound(n));
    REQUIRE(s.accel[i].w == 0.f);
  }
}

void check_size(std::size_t n, int steps, transport how) {
  const state from = start(n, 4700 + n);
  const auto f0 = nbody::host_forces_f64(from.body.data(), n, softening2);
  team world(MPI_COMM_WORLD, how);  // and this rank's GPU, where the reference runs too
  const state want = reference_run(from, steps);
  INFO("n = " << n << ", " << world.size() << " rank(s), transport "
              << nbody::ranks::to_string(how));
  state got = from;
  nbody::ranks::the_stage().simulate(world, got, dt, steps, softening2, nullptr);
  require_same_run(got, want, f0, steps, "stage 11 against stage 08");
  require_forces_right(got);
  if (world.size() > 1) {
    // The one-rank run of the same start, on this rank's GPU.
    team self(MPI_COMM_SELF, how);
    state one = from;
    nbody::ranks::the_stage().simulate(self, one, dt, steps, softening2, nullptr);
    require_same_run(got, one, f0, steps, "several ranks against one");
  }
}

}  // namespace

TEST_CASE("stage 11 follows stage 08's leapfrog at awkward sizes", "[ranks]") {
  const transport how = chosen_transport();
  if (!world_can_run(how)) return;
  for (std::size_t n : {std::size_t(1), std::size_t(5), std::size_t(1000), std::size_t(4099)})
    check_size(n, 5, how);
}

TEST_CASE("no bodies, no steps", "[ranks]") {
  const transport how = chosen_transport();
  if (!world_can_run(how)) return;
  team world(MPI_COMM_WORLD, how);
  state empty;
  nbody::ranks::the_stage().simulate(world, empty, dt, 3, softening2, nullptr);
  REQUIRE(empty.accel.empty());
  state still = start(300, 11);
  const auto before = still.body;
  nbody::ranks::the_stage().simulate(world, still, dt, 0, softening2, nullptr);
  REQUIRE(std::equal(before.begin(), before.end(), still.body.begin(), [](float4 a, float4 b) {
    return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w;
  }));
  require_forces_right(still);
}

TEST_CASE("the step's split is timed when asked", "[ranks]") {
  const transport how = chosen_transport();
  if (!world_can_run(how)) return;
  team world(MPI_COMM_WORLD, how);
  state s = start(2048, 3);
  nbody::ranks::step_times times;
  nbody::ranks::the_stage().simulate(world, s, dt, 3, softening2, &times);
  REQUIRE(times.force_ms > 0);
  REQUIRE(times.gather_ms >= 0);
  REQUIRE(times.step_ms >= times.force_ms);
}

// Sizes around the slice boundaries of 1..4 ranks and the tile, and 1..3 steps; the same seed on
// every rank (the first rank's, broadcast).
TEST_CASE("seeded random sizes and step counts", "[sweep]") {
  const transport how = chosen_transport();
  if (!world_can_run(how)) return;
  std::uint64_t seed = std::random_device{}();
  if (const char *s = std::getenv("COURSE_SEED")) seed = std::strtoull(s, nullptr, 10);
  MPI_CHECK(MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD));
  INFO("COURSE_SEED=" << seed << " replays this sweep");
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 6; ++trial) {
    const std::size_t n = 1 + rng() % 3000;
    check_size(n, 1 + int(rng() % 3), how);
  }
}
