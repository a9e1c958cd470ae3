// SPDX-License-Identifier: BSD-3-Clause
// The speed verdict's workload for chapter 14 (harness/judge.h): the forces on n bodies drawn at
// random (nbody::random_bodies, positions in [-1, 1]^3, masses in [0.5, 1.5], a fresh seed per
// run), softening 0.01 as in the benchmark, computed by the one stage linked in:
//  - a single-GPU stage (02..08): bodies and forces in device memory, timed by events;
//  - stage 10: bodies and forces in portable pinned host memory, host to host on the GPUs it
//    finds (the stage returns with the forces: timed by the host clock);
//  - stage 09, the CPU rival: host arrays, its widest instruction set, timed by the host clock.
// Parameters (key=value; the defaults are the benchmark's, lessons.toml picks each stage's):
//   n        bodies (lessons.toml's [workload] for the GPU stages; stages 09 and 10 say their own)
//   threads  threads per block (GPU stages; stage 06 has its own), or host threads of stage 09
//            (default 1: the SIMD row alone; 0: every core)
//   unroll   the inner loop's unroll factor (stages 02, 03, 07, 08)
//   rows     rows per thread (stages 07, 08; 0: the stage's choice)
//   gpus, parts   stage 10: GPUs to use (0: all visible) and row parts (0: one per GPU)
//   isa      stage 09: scalar, sse, avx2, avx512 or best (default: the widest this CPU runs)
//   seed     the bodies' seed (default: a fresh one)
#include "cpu_nbody.h"
#include "nbody.h"

#include "common/check.h"
#include "common/memory.h"
#include "common/parallel.h"
#include "common/random_fill.h"
#include "harness/judge.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

using course::judge::params;
using course::judge::workload;

namespace {

constexpr float softening2 = 0.01f * 0.01f;

std::vector<float4> bodies(const params &p, std::size_t n) {
  const auto seed = std::uint64_t(p.integer("seed", std::int64_t(course::fresh_seed() >> 1)));
  return nbody::random_bodies(n, seed);
}

// n: the chapter's workload (lessons.toml's [workload]) for the GPU stages; the CPU and multi-GPU
// stages have none here, their lessons.toml tables say n.
std::size_t bodies_count(const params &p, bool workload_default) {
  const std::int64_t n = workload_default ? p.integer("n", COURSE_WORKLOAD_N) : p.integer("n");
  if (n < 1)
    throw std::invalid_argument("n=" + std::to_string(n) + ": the judge needs at least one body");
  return std::size_t(n);
}

// The configuration as the benchmark's progression table writes it.
std::string describe(const nbody::stage &st, const nbody::config &cfg) {
  if (st.blocked)
    return (cfg.rows_per_thread ? std::to_string(cfg.rows_per_thread)
                                : std::string("the stage's")) +
           " rows per thread, " + std::to_string(cfg.threads) + " threads, unroll " +
           std::to_string(cfg.unroll);
  if (st.info.id.rfind("06", 0) == 0) return "the stage's own 4-warp blocks, N^2/2 pairs";
  std::string t = std::to_string(cfg.threads) + " threads";
  if (st.unroll_sweep) t += ", unroll " + std::to_string(cfg.unroll);
  return t;
}

workload device_workload(const nbody::stage &st, const params &p) {
  const std::size_t n = bodies_count(p, true);
  nbody::config cfg;
  cfg.threads = int(p.integer("threads", cfg.threads));
  cfg.unroll = int(p.integer("unroll", cfg.unroll));
  cfg.rows_per_thread = int(p.integer("rows", cfg.rows_per_thread));
  struct buffers {
    course::device_buffer<float4> body, force;
    explicit buffers(std::size_t n) : body(n), force(n) {}
  };
  auto b = std::make_shared<buffers>(n);
  const std::vector<float4> h = bodies(p, n);
  CUDA_CHECK(cudaMemcpy(b->body.get(), h.data(), n * sizeof(float4), cudaMemcpyHostToDevice));
  workload w;
  w.description = "n = " + std::to_string(n) + " bodies, " + describe(st, cfg);
  w.call = [&st, b, n, cfg](cudaStream_t s) {
    st.forces(b->force.get(), b->body.get(), n, softening2, cfg, s);
  };
  w.keep = b;
  return w;
}

workload multi_gpu_workload(const nbody::stage &st, const params &p) {
  const std::size_t n = bodies_count(p, false);
  nbody::config cfg;
  cfg.gpus = int(p.integer("gpus", 0));
  cfg.parts = int(p.integer("parts", 0));
  int visible = 0;
  CUDA_CHECK(cudaGetDeviceCount(&visible));
  const int gpus = cfg.gpus > 0 ? std::min(cfg.gpus, visible) : visible;
  struct arrays {
    course::host_buffer<float4> body, force;
    explicit arrays(std::size_t n)
        : body(n, course::host_memory::pinned), force(n, course::host_memory::pinned) {}
  };
  auto a = std::make_shared<arrays>(n);
  const std::vector<float4> h = bodies(p, n);
  std::memcpy(a->body.get(), h.data(), n * sizeof(float4));
  workload w;
  w.description = "n = " + std::to_string(n) + " bodies host to host on " + std::to_string(gpus) +
                  " GPU" + (gpus == 1 ? "" : "s") + ", " +
                  std::to_string(cfg.parts > 0 ? cfg.parts : gpus) + " part" +
                  ((cfg.parts > 0 ? cfg.parts : gpus) == 1 ? "" : "s") + ", copies included";
  w.host_timed = true;
  w.call = [&st, a, n, cfg](cudaStream_t) {
    st.forces_host(a->force.get(), a->body.get(), n, softening2, cfg);
  };
  w.keep = a;
  return w;
}

nbody::cpu::isa pick_isa(const nbody::cpu::stage &st, const std::string &name) {
  using nbody::cpu::isa;
  if (name == "best") return st.best();
  for (isa s : nbody::cpu::all_isas) {
    std::string lower = nbody::cpu::to_string(s);
    for (char &c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
    if (lower.rfind(name, 0) == 0) {  // "avx2" matches "avx2+fma"
      if (!st.supported(s))
        throw std::invalid_argument(std::string("this CPU does not support ") +
                                    nbody::cpu::to_string(s));
      return s;
    }
  }
  throw std::invalid_argument("isa=" + name + ": want scalar, sse, avx2, avx512 or best");
}

workload cpu_workload(const nbody::cpu::stage &st, const params &p) {
  const std::size_t n = bodies_count(p, false);
  const nbody::cpu::isa s = pick_isa(st, p.text("isa", "best"));
  const std::int64_t threads = p.integer("threads", 1);
  if (threads < 0)
    throw std::invalid_argument("threads=" + std::to_string(threads) +
                                ": want 0 (every core) or more");
  struct arrays {
    std::vector<float4> body, force;
    std::unique_ptr<course::thread_pool> pool;  // none: the calling thread alone
  };
  auto a = std::make_shared<arrays>();
  a->body = bodies(p, n);
  a->force.resize(n);
  if (threads != 1) a->pool = std::make_unique<course::thread_pool>(unsigned(threads));
  workload w;
  w.description =
      "n = " + std::to_string(n) + " bodies on the CPU, " + nbody::cpu::to_string(s) + ", " +
      (a->pool ? std::to_string(a->pool->size()) + " threads" : std::string("1 thread"));
  w.host_timed = true;
  w.call = [&st, a, n, s](cudaStream_t) {
    st.forces(a->force.data(), a->body.data(), n, softening2, s, a->pool.get());
  };
  w.keep = a;
  return w;
}

}  // namespace

workload course::judge::make_workload(const params &p) {
  if (const auto *st = linked_stage<nbody::stage>()) {
    if (st->forces) return device_workload(*st, p);
    if (st->forces_host) return multi_gpu_workload(*st, p);
  }
  if (const auto *st = linked_stage<nbody::cpu::stage>()) return cpu_workload(*st, p);
  throw std::logic_error("no chapter-14 stage is linked into this judge program");
}
