// SPDX-License-Identifier: BSD-3-Clause
// The simulation driver: N bodies from a deterministic random start (positions in [-1, 1]^3,
// masses in [0.5, 1.5], at rest), integrated with leapfrog Verlet (kick-drift-kick) for --steps
// steps of --dt, the forces computed by any stage (--stage: a GPU stage 02..08, 10 on --gpus GPUs,
// or 09 / cpu for the CPU). It prints the rate, and checks (exit status 1 when either fails):
//   - the first forces against the float64 reference on 256 sampled rows (nbody::error_bound);
//   - the total momentum: |sum m v| <= 1e-4 sum m |v| at the end (every pair pulls equal and
//     opposite, so only rounding moves it).
#include "cpu_nbody.h"
#include "host_nbody.h"
#include "nbody.h"

#include "common/check.h"
#include "common/cli.h"
#include "common/device.h"
#include "common/memory.h"
#include "common/parallel.h"
#include "common/timer.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <string>
#include <vector>

int main(int argc, char **argv) {
  std::int64_t n = 16384, steps = 10, seed = 1, gpus = 0;
  double dt = 1e-3, softening = 0.05;
  std::string stage_id = "08";
  course::options cli("nbody",
                      "Chapter 14: N-body simulation, leapfrog Verlet, forces from any stage.");
  cli.add("N", n, 1, std::int64_t(1) << 24, "bodies")
      .add("steps", steps, 0, 1000000, "time steps")
      .add("dt", dt, 1e-9, 1.0, "time step")
      .add("softening", softening, 1e-6, 10.0, "softening length (> 0)")
      .add("seed", seed, 0, std::int64_t(1) << 62, "seed of the random start")
      .add("gpus", gpus, 0, 64, "stage 10: GPUs to use (0: all visible)")
      .add("stage", stage_id, "stage id or its number: 02..08, 10 (GPUs), 09 or cpu (the CPU)");
  cli.parse(argc, argv);
  const float soft2 = float(softening * softening);
  const std::size_t count = std::size_t(n);
  const bool use_cpu = stage_id == "cpu" || stage_id.rfind("09", 0) == 0;

  const nbody::stage *gpu_stage = nullptr;
  const nbody::cpu::stage *cpu_stage = nullptr;
  if (use_cpu) {
    for (const auto &c : course::registered<nbody::cpu::stage>()) cpu_stage = &c;
  } else {
    for (const auto &s : course::registered<nbody::stage>())
      if (s.info.id.rfind(stage_id, 0) == 0) gpu_stage = &s;
    if (!gpu_stage && stage_id.rfind("11", 0) == 0) {
      std::fprintf(stderr,
                   "nbody: stage 11 runs on MPI ranks, in a program of its own: make nbody "
                   "ARGS='--ranks P' (build/bin/nbody-ranks)\n");
      return 2;
    }
    if (!gpu_stage) {
      std::fprintf(stderr, "nbody: no stage '%s' (02..08, 10, 09 or cpu)\n", stage_id.c_str());
      return 2;
    }
    const course::gpu_status gpu = course::probe_gpu();
    if (!gpu.usable) {
      // Exit 77: cannot run here (CTest's SKIP_RETURN_CODE reports the driver test as skipped).
      std::fprintf(
          stderr,
          "nbody: stage %s runs on a GPU, and this machine has none usable (%s). The CPU stage runs "
          "without one: add --stage cpu (make nbody ARGS='--stage cpu').\n",
          gpu_stage->info.id.c_str(), gpu.reason.c_str());
      return 77;
    }
  }
  const course::stage_info &info = use_cpu ? cpu_stage->info : gpu_stage->info;
  if (info.todo) {
    std::fprintf(stderr,
                 "nbody: stage %s is not yet implemented: fill in the EXERCISE region of %s\n",
                 info.id.c_str(), (info.todo_in.empty() ? info.file : info.todo_in).c_str());
    return 77;
  }

  try {
    std::vector<float4> body = nbody::random_bodies(count, std::uint64_t(seed)),
                        vel(count, float4{0, 0, 0, 0}), accel(count);
    course::thread_pool pool;
    nbody::config cfg;
    cfg.gpus = int(gpus);
    // Device or pinned buffers for the GPU stages, reused every step.
    course::device_buffer<float4> d_body(gpu_stage && gpu_stage->forces ? count : 0),
        d_force(gpu_stage && gpu_stage->forces ? count : 0);
    course::host_buffer<float4> h_body(gpu_stage && gpu_stage->forces_host ? count : 0,
                                       course::host_memory::pinned),
        h_force(gpu_stage && gpu_stage->forces_host ? count : 0, course::host_memory::pinned);
    double force_ms = 0;
    auto forces = [&](std::vector<float4> &a, const std::vector<float4> &b) {
      course::host_timer t;
      if (use_cpu) {
        cpu_stage->forces(a.data(), b.data(), count, soft2, cpu_stage->best(), &pool);
      } else if (gpu_stage->forces) {
        CUDA_CHECK(
            cudaMemcpy(d_body.get(), b.data(), count * sizeof(float4), cudaMemcpyHostToDevice));
        gpu_stage->forces(d_force.get(), d_body.get(), count, soft2, cfg, nullptr);
        CUDA_CHECK(
            cudaMemcpy(a.data(), d_force.get(), count * sizeof(float4), cudaMemcpyDeviceToHost));
      } else {
        std::memcpy(h_body.get(), b.data(), count * sizeof(float4));
        gpu_stage->forces_host(h_force.get(), h_body.get(), count, soft2, cfg);
        std::memcpy(a.data(), h_force.get(), count * sizeof(float4));
      }
      force_ms += t.elapsed_ms();
    };
    forces(accel, body);
    bool ok = true;
    const std::size_t stride = std::max<std::size_t>(1, count / 256);
    for (std::size_t i = 0; i < count; i += stride) {
      const double err =
          nbody::relative_error(accel[i], nbody::host_force_f64(body.data(), count, i, soft2));
      if (!(err <= nbody::error_bound(count))) {
        std::fprintf(stderr, "nbody: WRONG RESULT: force [%zu] relative error %g > %g\n", i, err,
                     nbody::error_bound(count));
        ok = false;
        break;
      }
    }
    force_ms = 0;
    course::host_timer wall;
    for (std::int64_t step = 0; step < steps; ++step)
      nbody::leapfrog_step(body, vel, accel, float(dt), forces);
    const double wall_ms = wall.elapsed_ms();
    const nbody::momentum p = nbody::total_momentum(body, vel);
    const double drift = std::sqrt(p.x * p.x + p.y * p.y + p.z * p.z);
    std::printf("nbody: stage %s (%s), N=%zu, %lld steps of dt=%g, softening %g, seed %lld\n",
                info.id.c_str(), info.title.c_str(), count, (long long)steps, dt, softening,
                (long long)seed);
    if (steps > 0)
      std::printf("  %.2f ms per step (forces %.2f ms incl. copies): %.3g interactions/s\n",
                  wall_ms / steps, force_ms / steps,
                  double(count) * count * steps / (force_ms * 1e-3));
    std::printf("  momentum |sum m v| = %.3g, sum m |v| = %.3g (bound 1e-4 of it)\n", drift,
                p.scale);
    if (drift > 1e-4 * p.scale) {
      std::fprintf(stderr, "nbody: WRONG RESULT: momentum drifted by %.3g of sum m |v|\n",
                   drift / p.scale);
      ok = false;
    }
    return ok ? 0 : 1;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "nbody: %s\n", e.what());
    return 1;
  }
}
