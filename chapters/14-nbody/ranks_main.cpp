// SPDX-License-Identifier: BSD-3-Clause
// The driver of stage 11: the simulation of nbody_main.cpp (the same random start, at rest;
// leapfrog Verlet) on MPI ranks, one GPU each. Under mpirun every process is a rank:
//   harness/mpirun.sh -n 4 build/bin/nbody-ranks --N 65536 --steps 20
// Started alone with --ranks P (make nbody ARGS='--ranks 4'), it starts itself that way through
// harness/mpirun.sh, which sets the course's launch environment (NCCL_NVLS_ENABLE=0). Rank 0
// prints the rate and the split of a step (the slowest rank's force and all-gather time) and
// checks, as the single-GPU driver does (exit status 1 when either fails): the final forces on
// 256 sampled rows against the float64 sums; the total momentum, |sum m v| <= 1e-4 sum m |v|.
#include "host_nbody.h"
#include "nbody.h"
#include "ranks.h"

#include "common/cli.h"
#include "common/device.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#ifndef COURSE_MPIRUN
#define COURSE_MPIRUN "harness/mpirun.sh"
#endif

namespace {

// Started by hand rather than by a launcher: no launcher's rank variables in the environment.
bool under_launcher() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") || std::getenv("PMIX_RANK");
}

// Starts this program on `ranks` ranks through harness/mpirun.sh, the other arguments as given.
int relaunch(int ranks, int argc, char **argv) {
  std::vector<std::string> words = {COURSE_MPIRUN, "-n", std::to_string(ranks), "/proc/self/exe"};
  char self[4096] = {};
  const ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
  if (length > 0) words[3] = std::string(self, std::size_t(length));
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--ranks") {
      ++i;  // the launcher's, not the ranks'
      continue;
    }
    words.push_back(argv[i]);
  }
  std::vector<char *> args;
  for (auto &w : words) args.push_back(w.data());
  args.push_back(nullptr);
  execv(args[0], args.data());
  std::fprintf(stderr, "nbody-ranks: cannot start %s\n", COURSE_MPIRUN);
  return 2;
}

}  // namespace

int main(int argc, char **argv) {
  std::int64_t n = 16384, steps = 10, seed = 1, ranks = 0;
  double dt = 1e-3, softening = 0.05;
  std::string how_name = nbody::ranks::to_string(nbody::ranks::default_transport());
  course::options cli("nbody-ranks",
                      "Chapter 14, stage 11: the N-body simulation on MPI ranks, one GPU each.");
  cli.add("N", n, 1, std::int64_t(1) << 24, "bodies")
      .add("steps", steps, 0, 1000000, "time steps")
      .add("dt", dt, 1e-9, 1.0, "time step")
      .add("softening", softening, 1e-6, 10.0, "softening length (> 0)")
      .add("seed", seed, 0, std::int64_t(1) << 62, "seed of the random start")
      .add("transport", how_name,
           "nccl (the default where built with NCCL: a GPU per rank) or mpi (host-staged; ranks "
           "may share a GPU)")
      .add("ranks", ranks, 0, 4096, "started alone: start this many ranks through mpirun");
  cli.parse(argc, argv);
  nbody::ranks::transport how;
  std::string why;
  if (!nbody::ranks::parse_transport(how_name, how, why)) {
    std::fprintf(stderr, "nbody-ranks: %s\n", why.c_str());
    return 2;
  }
  if (ranks > 1 && !under_launcher()) return relaunch(int(ranks), argc, argv);

  try {
    nbody::ranks::start_mpi();
    int rank = 0, size = 1;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const course::gpu_status gpu = course::probe_gpu();
    int usable = gpu.usable ? 1 : 0, all_usable = 0;
    MPI_CHECK(MPI_Allreduce(&usable, &all_usable, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (!all_usable) {
      // Exit 77: cannot run here (CTest's SKIP_RETURN_CODE reports the test as skipped).
      if (rank == 0)
        std::fprintf(stderr, "nbody-ranks: stage 11 runs on GPUs, and a rank has none usable%s\n",
                     gpu.usable ? "" : (" (" + gpu.reason + ")").c_str());
      return 77;
    }
    const nbody::ranks::stage &st = nbody::ranks::the_stage();
    if (st.info.todo) {
      if (rank == 0)
        std::fprintf(stderr,
                     "nbody-ranks: stage %s is not yet implemented: fill in the EXERCISE region "
                     "of %s\n",
                     st.info.id.c_str(),
                     (st.info.todo_in.empty() ? st.info.file : st.info.todo_in).c_str());
      return 77;
    }
    const std::string cannot = nbody::ranks::cannot_run(MPI_COMM_WORLD, how);
    if (!cannot.empty()) {
      if (rank == 0) std::fprintf(stderr, "nbody-ranks: %s\n", cannot.c_str());
      return 2;
    }
    nbody::ranks::team world(MPI_COMM_WORLD, how);
    const std::size_t count = std::size_t(n);
    const float soft2 = float(softening * softening);
    nbody::ranks::state s;
    s.body = nbody::random_bodies(count, std::uint64_t(seed));
    s.vel.assign(count, float4{0, 0, 0, 0});
    nbody::ranks::step_times mine, slowest;
    st.simulate(world, s, float(dt), int(steps), soft2, &mine);
    // The slowest rank's split: a step ends when the last rank's does.
    MPI_CHECK(
        MPI_Reduce(&mine.force_ms, &slowest.force_ms, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
    if (rank != 0) return 0;
    bool ok = true;
    const std::size_t stride = std::max<std::size_t>(1, count / 256);
    for (std::size_t i = 0; i < count; i += stride) {
      const double err =
          nbody::relative_error(s.accel[i], nbody::host_force_f64(s.body.data(), count, i, soft2));
      if (!(err <= nbody::error_bound(count))) {
        std::fprintf(stderr, "nbody-ranks: WRONG RESULT: force [%zu] relative error %g > %g\n", i,
                     err, nbody::error_bound(count));
        ok = false;
        break;
      }
    }
    const nbody::momentum p = nbody::total_momentum(s.body, s.vel);
    const double drift = std::sqrt(p.x * p.x + p.y * p.y + p.z * p.z);
    std::printf(
        "nbody-ranks: stage %s (%s), N=%zu on %d rank(s), transport %s, %lld steps of "
        "dt=%g, softening %g, seed %lld\n",
        st.info.id.c_str(), st.info.title.c_str(), count, size, nbody::ranks::to_string(how),
        (long long)steps, dt, softening, (long long)seed);
    if (steps > 0)
      std::printf(
          "  %.3f ms per step (slowest rank: forces %.3f ms, all-gather %.3f ms): %.3g "
          "interactions/s\n",
          slowest.step_ms, slowest.force_ms, slowest.gather_ms,
          double(count) * count / (slowest.step_ms * 1e-3));
    std::printf("  momentum |sum m v| = %.3g, sum m |v| = %.3g (bound 1e-4 of it)\n", drift,
                p.scale);
    if (drift > 1e-4 * p.scale) {
      std::fprintf(stderr, "nbody-ranks: WRONG RESULT: momentum drifted by %.3g of sum m |v|\n",
                   drift / p.scale);
      ok = false;
    }
    return ok ? 0 : 1;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "nbody-ranks: %s\n", e.what());
    return 1;
  }
}
