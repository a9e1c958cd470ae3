// SPDX-License-Identifier: BSD-3-Clause
// Stage 11's scaling, beside stage 10's on the same GPUs. Started under mpirun with one rank per
// GPU (make bench-ranks does it: harness/mpirun.sh -n <GPUs, at most 4>); the runs on P ranks use
// the world's first P ranks (a sub-communicator), the others waiting.
//   - strong scaling: N = 256K and 1M (--strong-N) on 1, 2 and 4 ranks (those the world has);
//   - weak scaling: N = --weak-N per rank (all-pairs work per GPU then grows as P: efficiency is
//     interactions/s per GPU against one GPU's);
//   - each step split into the force kernel and the all-gather (CUDA events on every rank, the
//     slowest rank's, MPI_Reduce MAX), speedup and efficiency against the same stage on one;
//   - stage 10 on the same GPUs (rank 0 alone drives P GPUs with P threads): one force call, host
//     to host, copies included, as its own table measures it.
// Rank 0 prints the tables and writes results/bench_ranks.json (--results). With --transport mpi
// several ranks may share a GPU: the tables then show the code path, not the scaling.
#include "host_nbody.h"
#include "nbody.h"
#include "ranks.h"

#include "common/check.h"
#include "common/cli.h"
#include "common/device.h"
#include "common/memory.h"
#include "common/timer.h"
#include "harness/bench.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

namespace {

namespace bench = course::bench;
using nbody::ranks::step_times;

constexpr float softening2 = 0.05f * 0.05f, dt = 1e-4f;

struct measured {
  step_times split;  // the slowest rank's, ms per step
  bool ran = false;
};

// Stage 11 on the world's first `ranks` ranks: warm-up steps, then `steps` timed ones. Every rank
// of the world calls it (the others wait at the barrier).
measured time_stage_11(int ranks, nbody::ranks::transport how, std::size_t n, int steps) {
  int rank = 0;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_Comm sub;
  MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank < ranks ? 0 : MPI_UNDEFINED, rank, &sub));
  measured m;
  if (sub != MPI_COMM_NULL) {
    {
      nbody::ranks::team t(sub, how);
      nbody::ranks::state s;
      s.body = nbody::random_bodies(n, 47);
      s.vel.assign(n, float4{0, 0, 0, 0});
      nbody::ranks::step_times warm, mine;
      // Warm-up: module loading, NCCL's first use of its channels, clocks ramping up.
      nbody::ranks::the_stage().simulate(t, s, dt, 2, softening2, &warm);
      nbody::ranks::the_stage().simulate(t, s, dt, steps, softening2, &mine);
      MPI_CHECK(MPI_Reduce(&mine.force_ms, &m.split.force_ms, 3, MPI_DOUBLE, MPI_MAX, 0, sub));
      m.ran = true;
    }
    MPI_CHECK(MPI_Comm_free(&sub));
  }
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  return m;
}

// Stage 10 on `gpus` GPUs, driven by rank 0 alone: the median of `repeats` force calls.
double time_stage_10(const nbody::stage &st, int gpus, std::size_t n, int repeats) {
  course::host_buffer<float4> h_body(n, course::host_memory::pinned),
      h_force(n, course::host_memory::pinned);
  const auto body = nbody::random_bodies(n, 47);
  std::memcpy(h_body.get(), body.data(), n * sizeof(float4));
  nbody::config cfg;
  cfg.gpus = gpus;
  st.forces_host(h_force.get(), h_body.get(), n, softening2, cfg);  // warm-up
  std::vector<double> ms;
  for (int i = 0; i < repeats; ++i) {
    course::host_timer timer;
    st.forces_host(h_force.get(), h_body.get(), n, softening2, cfg);
    ms.push_back(timer.elapsed_ms());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

std::string kilo(std::size_t n) {
  return n % (1024 * 1024) == 0 ? std::to_string(n >> 20) + "M" : std::to_string(n >> 10) + "K";
}

std::vector<bench::column> columns() {
  return {{"setup", 0},     {"N", 0},
          {"gpus", 0},      {"ranks", 0},
          {"step_ms", 3},   {"force_ms", 3},
          {"gather_ms", 3}, {"Ginteractions/s", 1},
          {"speedup", 3},   {"efficiency_pct", 1}};
}

}  // namespace

int main(int argc, char **argv) {
  std::int64_t steps = 5, weak_k = 64, repeats = 5;
  std::string how_name = nbody::ranks::to_string(nbody::ranks::default_transport());
  std::string strong = "256,1024", results = "results";
  bool skip_10 = false;
  course::options cli("bench-ranks",
                      "Chapter 14: stage 11's strong and weak scaling, stage 10 beside it.");
  cli.add("steps", steps, 1, 1000, "timed steps per run (after 2 warm-up steps)")
      .add("strong-N", strong, "strong scaling sizes, in thousands (x 1024), comma-separated")
      .add("weak-N", weak_k, 1, 4096, "weak scaling: bodies per rank, in thousands (x 1024)")
      .add("repeats", repeats, 1, 100, "stage 10: timed force calls per setup (the median)")
      .add("transport", how_name, "nccl (one GPU per rank) or mpi (ranks may share a GPU)")
      .add("results", results, "directory for the CSV and JSON results")
      .flag("skip-10", skip_10, "leave out stage 10");
  cli.parse(argc, argv);
  nbody::ranks::transport how;
  std::string why;
  if (!nbody::ranks::parse_transport(how_name, how, why)) {
    std::fprintf(stderr, "bench-ranks: %s\n", why.c_str());
    return 2;
  }
  std::vector<std::size_t> strong_n;
  for (std::size_t at = 0; at < strong.size();) {
    const std::size_t comma = std::min(strong.find(',', at), strong.size());
    const long k = std::strtol(strong.substr(at, comma - at).c_str(), nullptr, 10);
    if (k < 1 || k > 16384) {
      std::fprintf(stderr, "bench-ranks: --strong-N '%s': thousands of bodies, 1..16384\n",
                   strong.c_str());
      return 2;
    }
    strong_n.push_back(std::size_t(k) * 1024);
    at = comma + 1;
  }
  try {
    nbody::ranks::start_mpi();
    int rank = 0, size = 1;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const course::gpu_status gpu = course::probe_gpu();
    if (!gpu.usable) {
      std::printf("bench-ranks: skipped: %s\n", gpu.reason.c_str());
      return 0;
    }
    const std::string cannot = nbody::ranks::cannot_run(MPI_COMM_WORLD, how);
    if (!cannot.empty()) {
      if (rank == 0) std::fprintf(stderr, "bench-ranks: %s\n", cannot.c_str());
      return 2;
    }
    int visible = 0;
    CUDA_CHECK(cudaGetDeviceCount(&visible));
    const nbody::stage *st10 = nullptr;
    for (const auto &st : course::registered<nbody::stage>())
      if (st.forces_host) st10 = &st;
    std::vector<int> counts;
    for (int p : {1, 2, 4})
      if (p <= size) counts.push_back(p);
    // GPUs a run on p ranks uses: one per rank, or fewer where ranks share them (mpi transport).
    auto gpus_of = [&](int p) { return std::min(p, visible); };

    bench::report rep("bench_ranks", "Chapter 14, stage 11: ranks, one GPU each",
                      course::query_device(0));
    rep.param("transport", nbody::ranks::to_string(how));
    rep.param("world_ranks", double(size));
    rep.param("steps", double(steps));
    rep.param("softening", 0.05);

    bench::table strong_t("ranks_strong",
                          "Strong scaling: a step of stage 11 (the slowest rank's split) beside a "
                          "force call of stage 10, same GPUs",
                          columns());
    // The goals, judged where measured on GPUs of their own (not ranks sharing one).
    double strong_eff_4 = -1, two_11_ms = -1, two_10_ms = -1;
    for (std::size_t n : strong_n) {
      double one_11 = 0, one_10 = 0;
      for (int p : counts) {
        const measured m = time_stage_11(p, how, n, int(steps));
        if (rank == 0) {
          const double rate = double(n) * n / (m.split.step_ms * 1e-3);
          if (p == 1) one_11 = m.split.step_ms;
          if (gpus_of(p) == p && n == 256 * 1024 && p == 4)
            strong_eff_4 = 100 * one_11 / (m.split.step_ms * p);
          if (gpus_of(p) == p && n == 256 * 1024 && p == 2) two_11_ms = m.split.step_ms;
          strong_t.add_row({std::string("11_ranks, ") + nbody::ranks::to_string(how), double(n),
                            double(gpus_of(p)), double(p), m.split.step_ms, m.split.force_ms,
                            m.split.gather_ms, rate / 1e9, one_11 / m.split.step_ms,
                            100 * one_11 / (m.split.step_ms * p)});
        }
        if (!skip_10 && st10 && !st10->info.todo && rank == 0 && p <= visible) {
          const double ms = time_stage_10(*st10, p, n, int(repeats));
          if (p == 1) one_10 = ms;
          if (n == 256 * 1024 && p == 2) two_10_ms = ms;
          strong_t.add_row({std::string("10_multi_gpu"), double(n), double(p), bench::cell(), ms,
                            bench::cell(), bench::cell(), double(n) * n / (ms * 1e-3) / 1e9,
                            one_10 / ms, 100 * one_10 / (ms * p)});
        }
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
      }
    }
    strong_t.set_plot({"bars", "setup", "Ginteractions/s"});

    bench::table weak_t("ranks_weak",
                        "Weak scaling: " + kilo(std::size_t(weak_k) * 1024) +
                            " bodies per rank (work per GPU grows as P: efficiency is "
                            "interactions/s per GPU against one GPU's)",
                        columns());
    double rate_one = 0, weak_eff = -1;
    int weak_p = 0;
    for (int p : counts) {
      const std::size_t n = std::size_t(weak_k) * 1024 * std::size_t(p);
      const measured m = time_stage_11(p, how, n, int(steps));
      if (rank == 0) {
        const double rate = double(n) * n / (m.split.step_ms * 1e-3);
        if (p == 1) rate_one = rate;
        if (p > 1 && gpus_of(p) == p) weak_eff = 100 * rate / (rate_one * p), weak_p = p;
        weak_t.add_row({std::string("11_ranks, ") + nbody::ranks::to_string(how), double(n),
                        double(gpus_of(p)), double(p), m.split.step_ms, m.split.force_ms,
                        m.split.gather_ms, rate / 1e9, rate / rate_one,
                        100 * rate / (rate_one * p)});
      }
    }
    weak_t.set_plot({"bars", "ranks", "efficiency_pct"});
    if (rank == 0) {
      if (visible < 4 && how == nbody::ranks::transport::nccl)
        strong_t.note(std::to_string(visible) +
                      " GPU(s) visible: the runs on more ranks need more GPUs (not measured)");
      if (how == nbody::ranks::transport::mpi && size > visible)
        strong_t.note("transport mpi, " + std::to_string(size) + " ranks on " +
                      std::to_string(visible) +
                      " GPU(s): ranks share GPUs; the rows show the code path, not scaling");
      char line[256];
      auto goal = [&](bench::table &tab, const char *what, bool measured, bool met, double value) {
        if (measured)
          std::snprintf(line, sizeof line, "goal: %s: %s, %.1f", what, met ? "met" : "MISSED",
                        value);
        else
          std::snprintf(line, sizeof line, "goal: %s: not measured (%d GPU(s) visible here)", what,
                        visible);
        tab.note(line);
      };
      goal(strong_t, ">= 95% strong-scaling efficiency on 4 GPUs at N = 256K", strong_eff_4 >= 0,
           strong_eff_4 >= 95, strong_eff_4);
      goal(strong_t, "stage 11 on 2 GPUs at least as fast as stage 10 (ms, 11 / 10 x 100)",
           two_11_ms > 0 && two_10_ms > 0, two_11_ms <= two_10_ms,
           two_10_ms > 0 ? 100 * two_11_ms / two_10_ms : 0);
      goal(weak_t, ">= 98% weak-scaling efficiency", weak_eff >= 0, weak_eff >= 98, weak_eff);
      if (weak_eff >= 0) weak_t.note("(weak: measured up to " + std::to_string(weak_p) + " GPUs)");
      strong_t.print();
      weak_t.print();
      rep.add(std::move(strong_t));
      rep.add(std::move(weak_t));
      rep.write(results);
    }
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "bench-ranks: %s\n", e.what());
    return 1;
  }
}
