// SPDX-License-Identifier: BSD-3-Clause
// Chapter 14 benchmark: every N-body stage, the CPU rival and several GPUs, in one run. One
// function per table; the measuring frame (options, adaptive repeats, L2 flush, batch figure,
// NVTX profile ranges, failure accounting) is harness/bench_session.h. Every timed row carries
// median (time_ms), min_ms, max_ms, repeats, spread% (relative std-dev) and, for device rows,
// batch_ms (per call in a batch of back-to-back calls); a row whose spread exceeds 5% gets a
// warning line under its table.
//
// progression (--N thousands of bodies, default 128 = 131072): each GPU stage's time,
// body-body interactions per second (N^2 / time; stage 06 computes about half the pairs and is
// reported in the same brute-force-equivalent unit), GFLOP/s at 20 flops per interaction beside
// it (14.1.1's count; the book itself reports interactions/s, not GFLOP/s), and
// the rate against two bounds derived from the FMA rate measured in this run: the FP32-pipe
// ceiling, FMA rate / 12 (listing 14.1's 12 FP32-pipe instructions per interaction), and the
// mass-scaled form's own bound, FMA rate / 11 (stage 08's 11). Beside them the rate of stage 08's
// instruction mix alone: steps of one MUFU.RSQ and 11 FP32 instructions in registers, with 1, 2, 4
// or 8 independent chains per thread (how many MUFU.RSQ a warp reaches at once), no memory
// instruction (harness/ceilings.cu), its FFMAs reading two registers and an immediate, then the
// same with three registers, as most of the interaction's FFMAs read. Goals, as met/missed lines
// with the measured ratio, on the GPUs they are set for (harness/bench_goals.h; the H100 and H200:
// the best >= 2.0e12 interactions/s, and >= 2.3e12 at N = 128K); elsewhere a line saying none is
// set. Headline: the best stage against both bounds. N-body has no library baseline; the ceilings
// are its comparison. lab_symmetric_atomics (14.1.1, figure 14.2): the naive symmetric form the
// book dismisses, each pair once with float atomic adds into global memory
// (lab_symmetric_atomics.cu), in its two pair orders, beside stage 06 and the best stage at the
// same N (--lab-N, default --N). lab_rsqrt_pipes (lab_rsqrt_pipes.cu): stage 08's kernel with a
// share of its roots on the FMA pipe or its MUFU.RSQ spread by hand, between two rows of stage 08
// at --N (label prefix "rsqrt lab"), with the 128K goal line. unroll, blocking: the unroll sweeps
// of stages 02 and 03 (tables 14.1 and 14.2), and the blocking of stages 07 (listing 14.1's
// interaction: 12 FP32-pipe instructions) and 08 (mass-scaled: 11); the progression runs each at
// its best. by_n: interactions/s against N for stages 03, 05, 06, 07 and 08. cpu (--cpu-N, default
// 16K bodies; timed on the host): scalar (listing 14.2), each SIMD width on one thread, the widest
// on every core (table 14.4); the widest on every core again at --N, for the GPU/CPU ratio.
// multi_gpu
// (--mgpu-N, default 256K): stage 10 on 1..all visible GPUs (table 14.3's efficiency: rate / (GPUs
// x the 1-GPU rate)), host to host, copies included; on one GPU also 2 and 3 parts. Every result is
// checked against the float64 reference on 512 sampled rows; a wrong one makes the program exit 1.
#include "cpu_nbody.h"
#include "host_nbody.h"
#include "lab_rsqrt_pipes.h"
#include "lab_symmetric_atomics.h"
#include "nbody.h"

#include "common/cli.h"
#include "common/device.h"
#include "common/memory.h"
#include "common/parallel.h"
#include "harness/bench.h"
#include "harness/bench_goals.h"
#include "harness/bench_session.h"
#include "harness/test_support.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace bench = course::bench;
using bench::cell;
using bench::plot_hint;
using bench::table;

namespace {

constexpr std::uint64_t seed = 14;
constexpr float softening2 = 0.01f * 0.01f;
constexpr std::size_t sampled_rows = 512;
const std::string ceiling_label = "FP32-pipe ceiling";
const std::string bound_label = "mass-scaled bound";
const std::string mix_label = "MUFU.RSQ + 11 FP32, registers";
const std::string mix3_label = "MUFU.RSQ + 11 FP32, 3-register FFMAs";

struct options_t {
  // The defaults: chapters/14-nbody/lessons.toml's [workload.bench] (COURSE_BENCH_*, from CMake).
  std::int64_t n_k = COURSE_BENCH_N, lab_n_k = 0, cpu_n_k = COURSE_BENCH_CPU_N,
               mgpu_n_k = COURSE_BENCH_MGPU_N;
  bool skip_cpu = false;
};

double per_s(std::size_t n, double ms) { return ms > 0 ? double(n) * double(n) / (ms * 1e-3) : 0; }
std::string kilo(std::size_t n) { return std::to_string(n / 1024) + "K"; }
void append(std::vector<cell> &row, const std::vector<cell> &more) {
  row.insert(row.end(), more.begin(), more.end());
}
std::vector<bench::column> columns(std::vector<bench::column> head,
                                   const std::vector<bench::column> &tail) {
  for (const auto &c : bench::timing_columns()) head.push_back(c);
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

// Checks got against the float64 reference on evenly spaced rows; a wrong one is counted.
void verify(bench::session &s, const std::string &who, const float4 *body, std::size_t n,
            const float4 *got) {
  const std::size_t step = std::max<std::size_t>(1, n / sampled_rows);
  for (std::size_t i = 0; i < n; i += step) {
    const double err = nbody::relative_error(got[i], nbody::host_force_f64(body, n, i, softening2));
    if (!(err <= nbody::error_bound(n)) || got[i].w != 0.f) {
      char buf[256];
      std::snprintf(buf, sizeof buf, "%s, n=%zu: force [%zu] relative error %g > %g (w = %g)",
                    who.c_str(), n, i, err, nbody::error_bound(n), double(got[i].w));
      s.fail(buf);
      return;
    }
  }
}
void verify_device(bench::session &s, const std::string &who, const float4 *body, std::size_t n,
                   const float4 *d_got) {
  CUDA_CHECK(cudaStreamSynchronize(s.stream()));
  std::vector<float4> got(n);
  CUDA_CHECK(cudaMemcpy(got.data(), d_got, n * sizeof(float4), cudaMemcpyDeviceToHost));
  verify(s, who, body, n, got.data());
}

// The fastest GPU stage of the progression, for the tables after it.
struct pick {
  const nbody::stage *stage = nullptr;
  nbody::config cfg;
  bench::measurement m;
};

// What every table uses: the bodies on the device, the bounds, the choices of the sweeps.
struct context {
  bench::session &s;
  const options_t &opt;
  std::size_t n;
  std::vector<float4> body;
  course::device_buffer<float4> d_body, d_force;
  double ceiling = 0, bound11 = 0;  // interactions/s; 0: not measured (--only left them out)
  struct mix_rates {
    double lo = 0, hi = 0;  // steps/s over 1, 2, 4 and 8 chains (0: not measured)
    int lo_chains = 0, hi_chains = 0;
  };
  mix_rates mix;   // stage 08's mix alone, FFMAs reading two registers and an immediate
  mix_rates mix3;  // the same, FFMAs reading three registers
  std::map<std::string, int> best_unroll;
  std::map<std::string, nbody::config> best_blocking;
  pick best;

  context(bench::session &session, const options_t &o)
      : s(session),
        opt(o),
        n(std::size_t(o.n_k) * 1024),
        body(nbody::random_bodies(n, seed)),
        d_body(n),
        d_force(n) {
    CUDA_CHECK(cudaMemcpy(d_body.get(), body.data(), n * sizeof(float4), cudaMemcpyHostToDevice));
  }
  static std::size_t bytes(std::size_t m) {
    return 2 * m * sizeof(float4);
  }  // bodies in, forces out
  bench::work forces(const nbody::stage &st, const nbody::config &cfg) {
    return [this, &st, cfg](cudaStream_t stream) {
      st.forces(d_force.get(), d_body.get(), n, softening2, cfg, stream);
    };
  }
  void poison() { CUDA_CHECK(cudaMemset(d_force.get(), 0xFF, n * sizeof(float4))); }
  // Ginteractions/s, GFLOP/s_20, pct_fp32_ceiling, pct_11_bound of a rate.
  std::vector<cell> rates(double r) const {
    return {r / 1e9, r * nbody::flops_per_interaction / 1e9,
            ceiling > 0 ? cell(100 * r / ceiling) : cell(),
            bound11 > 0 ? cell(100 * r / bound11) : cell()};
  }
  // The configuration the progression (and by_n) runs a stage in: its best unroll or blocking.
  nbody::config config_of(const nbody::stage &st) const {
    nbody::config cfg;
    if (auto b = best_blocking.find(st.info.id); st.blocked && b != best_blocking.end())
      cfg = b->second;
    if (auto u = best_unroll.find(st.info.id); st.unroll_sweep && u != best_unroll.end())
      cfg.unroll = u->second;
    return cfg;
  }
};

const nbody::stage *find_stage(const std::string &prefix) {
  for (const auto &st : course::registered<nbody::stage>())
    if (st.forces && !st.info.todo && st.info.id.rfind(prefix, 0) == 0) return &st;
  return nullptr;
}

std::string config_text(const nbody::stage &st, const nbody::config &cfg) {
  if (st.blocked)
    return "R " +
           (cfg.rows_per_thread ? std::to_string(cfg.rows_per_thread) : std::string("auto")) +
           ", threads " + std::to_string(cfg.threads) + ", unroll " + std::to_string(cfg.unroll);
  if (st.info.id.rfind("06", 0) == 0) return "4 warps, N^2/2 pairs";
  std::string t = "threads " + std::to_string(cfg.threads);
  if (st.unroll_sweep) t += ", unroll " + std::to_string(cfg.unroll);
  if (st.info.id.rfind("04", 0) == 0) t += ", 4000 bodies/pass";
  return t;
}

// Both bounds from the FMA rate measured here (FFMA/s = TFLOP/s / 2): the FP32 pipe issues one FP32
// instruction per lane per clock, so an interaction of k FP32-pipe instructions runs at most at
// FFMA/s / k (the MUFU.RSQ and the shared loads take issue slots too: a bound, not a target).
void measure_bounds(context &c) {
  if (!c.s.selected(ceiling_label) && !c.s.selected(bound_label)) return;
  const double fma_tflops = bench::fma_tflops();
  const double fma_per_s = fma_tflops * 1e12 / 2;
  c.ceiling = fma_per_s / nbody::fp32_instructions_per_interaction;
  c.bound11 = fma_per_s / nbody::mass_scaled_fp32_instructions_per_interaction;
  c.s.results().param("fma_tflops", fma_tflops);
  c.s.results().param("fp32_ceiling_interactions_per_s", c.ceiling);
  c.s.results().param("mass_scaled_bound_interactions_per_s", c.bound11);
  std::printf(
      "\nFP32 FMA rate measured: %.1f TFLOP/s = %.4g FFMA/s -> FP32-pipe ceiling (12 instructions, listing 14.1) "
      "%.4g interactions/s; the mass-scaled form's own bound (11 instructions) %.4g interactions/s\n",
      fma_tflops, fma_per_s, c.ceiling, c.bound11);
}

// Stage 08's instruction mix with nothing else: one MUFU.RSQ and 11 FP32-pipe instructions per
// step, in registers, at 1, 2, 4 and 8 independent chains per thread. What separates the kernel
// from this rate is its memory instructions, its loop and its operands; what separates this rate
// from FMA rate / 11 is the MUFU.RSQ, and the spread over the chains is how a warp's MUFU.RSQ are
// grouped. Then the same mix with FFMAs that read three registers where it read two and an
// immediate, as most of the interaction's FFMAs do: a third source register costs issue cycles.
void measure_mix(context &c) {
  for (bool three : {false, true}) {
    if (!c.s.selected(three ? mix3_label : mix_label)) continue;
    context::mix_rates &m = three ? c.mix3 : c.mix;
    std::string rates;
    for (int chains : {1, 2, 4, 8}) {
      const double r = bench::rsqrt_mix_per_s(chains, three);
      c.s.results().param(
          std::string(three ? "rsqrt_mix_11_3reg_chains_" : "rsqrt_mix_11_chains_") +
              std::to_string(chains) + "_per_s",
          r);
      if (m.hi == 0 || r > m.hi) m.hi = r, m.hi_chains = chains;
      if (m.lo == 0 || r < m.lo) m.lo = r, m.lo_chains = chains;
      char buf[64];
      std::snprintf(buf, sizeof buf, "%s%d: %.4g", rates.empty() ? "" : ", ", chains, r);
      rates += buf;
    }
    std::printf(
        "Stage 08's mix alone (one MUFU.RSQ + 11 FP32 instructions a step, registers only, FFMAs reading %s), "
        "steps/s by chains per thread: %s\n",
        three ? "three registers" : "two registers and an immediate", rates.c_str());
  }
}

// Tables 14.1 and 14.2: stages 02 and 03 at every unroll factor; the best goes to the progression.
void unroll_table(context &c) {
  table t("unroll", "Unroll sweeps at N = " + kilo(c.n) + " (tables 14.1 and 14.2)",
          columns({{"stage", 0}, {"unroll", 0}}, {{"Ginteractions/s", 1}}));
  for (const auto &st : course::registered<nbody::stage>()) {
    if (!st.forces || !st.unroll_sweep || st.info.todo || !c.s.selected(st.info.id)) continue;
    double best_ms = 0;
    for (int u : {1, 2, 4, 8, 16, 32}) {
      nbody::config cfg;
      cfg.unroll = u;
      const auto m = c.s.time(st.info.id, c.forces(st, cfg), c.bytes(c.n));
      std::vector<cell> row = {st.info.id, double(u)};
      append(row, bench::timing_cells(m));
      row.push_back(per_s(c.n, m.per_call.median) / 1e9);
      t.add_row(std::move(row));
      bench::warn_if_noisy(t, st.info.id + " unroll " + std::to_string(u), m);
      if (best_ms == 0 || m.per_call.median < best_ms)
        best_ms = m.per_call.median, c.best_unroll[st.info.id] = u;
    }
  }
  plot_hint hint{"lines", "unroll", "Ginteractions/s"};
  hint.series = "stage";
  hint.logx = true;
  t.set_plot(hint);
  t.note(
      "(the book, GK104, table 14.1: 25e9/s without unroll, 34.3e9 with 16 (+37%); table 14.2: best unroll 4, +18%)");
  c.s.finish(std::move(t));
}

// Stages 07 and 08: rows per thread x threads per block x unroll; the best goes to the progression.
void blocking_table(context &c) {
  table t("blocking",
          "Stages 07 and 08: rows per thread x threads per block x unroll at N = " + kilo(c.n),
          columns({{"stage", 0}, {"rows_per_thread", 0}, {"threads", 0}, {"unroll", 0}},
                  {{"Ginteractions/s", 1}, {"pct_fp32_ceiling", 1}, {"pct_11_bound", 1}}));
  for (const auto &st : course::registered<nbody::stage>()) {
    if (!st.forces || !st.blocked || st.info.todo || !c.s.selected(st.info.id)) continue;
    double best_ms = 0;
    for (int r : {1, 2, 4, 8}) {
      for (int b : {128, 256}) {
        for (int u : {8, 16, 32}) {
          nbody::config cfg;
          cfg.rows_per_thread = r, cfg.threads = b, cfg.unroll = u;
          const auto m = c.s.time(st.info.id, c.forces(st, cfg), c.bytes(c.n));
          std::vector<cell> row = {st.info.id, double(r), double(b), double(u)};
          append(row, bench::timing_cells(m));
          const auto rates = c.rates(per_s(c.n, m.per_call.median));
          row.push_back(rates[0]), row.push_back(rates[2]), row.push_back(rates[3]);
          t.add_row(std::move(row));
          bench::warn_if_noisy(t, st.info.id + " " + config_text(st, cfg), m);
          if (best_ms == 0 || m.per_call.median < best_ms)
            best_ms = m.per_call.median, c.best_blocking[st.info.id] = cfg;
        }
      }
    }
  }
  c.s.finish(std::move(t));
}

// The goal at N = 128K, met or missed, and when missed, the cause the run measured.
void raised_goal_line(context &c, table &t, const std::string &id, double r, double lo, double hi,
                      const std::string &goal_for, double raised_goal) {
  char buf[768];
  std::snprintf(
      buf, sizeof buf,
      ": >= %s interactions/s at N = 128K: %s, %s at %.3fx the goal (%.3f-%.3fx over the repeats)",
      bench::e12_text(raised_goal).c_str(), r >= raised_goal ? "met" : "MISSED", id.c_str(),
      r / raised_goal, lo / raised_goal, hi / raised_goal);
  std::string line = goal_for + buf;
  if (r < raised_goal && c.mix.hi > 0) {
    std::snprintf(
        buf, sizeof buf,
        "; cause: its inner loop is at its instruction floor, and that mix alone (one MUFU.RSQ + 11 FP32, "
        "registers only) issues at %.4g-%.4g steps/s here with FFMAs reading two registers: the goal is %.1f%% of its "
        "best, the kernel reaches %.1f%%",
        c.mix.lo, c.mix.hi, 100 * raised_goal / c.mix.hi, 100 * r / c.mix.hi);
    line += buf;
    if (c.mix3.hi > 0) {
      std::snprintf(
          buf, sizeof buf,
          "; with three-register FFMAs, as most of the interaction's, the mix reaches %.4g at best, ",
          c.mix3.hi);
      line += buf;
      if (r >= c.mix3.hi) {
        line += "below the kernel: what is left is the issue rate of the kernel's own loop";
      } else {
        std::snprintf(buf, sizeof buf, "the kernel %.1f%% of it", 100 * r / c.mix3.hi);
        line += buf;
      }
    }
    std::snprintf(buf, sizeof buf, " (chapters/14-nbody/notes.md; make profile STAGE=14-nbody/%s)",
                  id.c_str());
    line += buf;
  } else if (r < raised_goal && c.bound11 > 0) {
    std::snprintf(
        buf, sizeof buf,
        "; cause: the goal needs %.1f%% of the 11-instruction bound, the kernel reaches %.1f%%: its inner "
        "loop is at its instruction floor, the gap is issue stalls (chapters/14-nbody/notes.md; make profile STAGE=14-nbody/%s)",
        100 * raised_goal / c.bound11, 100 * r / c.bound11, id.c_str());
    line += buf;
  }
  t.note(line);
  c.s.results().headline("N-body " + line);
}

// The met/missed lines and the headlines of the progression.
void progression_goals(context &c, table &t) {
  if (!c.best.stage) return;
  const auto &pc = c.best.m.per_call;
  const std::string id = c.best.stage->info.id;
  const double r = per_s(c.n, pc.median), lo = per_s(c.n, pc.max), hi = per_s(c.n, pc.min);
  char buf[768];
  std::snprintf(buf, sizeof buf, "%s at N = %s: %.4g interactions/s (%.4g-%.4g over %d repeats)",
                id.c_str(), kilo(c.n).c_str(), r, lo, hi, pc.repeats);
  std::string line = buf;
  if (c.ceiling > 0) {
    std::snprintf(
        buf, sizeof buf,
        ": %.1f%% (%.1f-%.1f%%) of its own 11-instruction bound (FMA rate / 11 = %.4g) and %.1f%% "
        "(%.1f-%.1f%%) of the 12-instruction FP32-pipe ceiling (FMA rate / 12 = %.4g), both from the FMA rate measured in this run",
        100 * r / c.bound11, 100 * lo / c.bound11, 100 * hi / c.bound11, c.bound11,
        100 * r / c.ceiling, 100 * lo / c.ceiling, 100 * hi / c.ceiling, c.ceiling);
    line += buf;
  }
  t.note("best single-GPU stage: " + line);
  c.s.results().headline("N-body " + line);
  if (c.mix.hi > 0) {
    std::snprintf(
        buf, sizeof buf,
        "stage 08's mix alone (one MUFU.RSQ + 11 FP32 instructions a step, registers only, no memory "
        "instruction, FFMAs reading two registers and an immediate): %.4g steps/s at %d chains per thread (the best) to "
        "%.4g at %d (the worst); %s reaches %.1f%% (%.1f-%.1f%%) of the best",
        c.mix.hi, c.mix.hi_chains, c.mix.lo, c.mix.lo_chains, id.c_str(), 100 * r / c.mix.hi,
        100 * lo / c.mix.hi, 100 * hi / c.mix.hi);
    t.note(buf);
    c.s.results().param("best_pct_rsqrt_mix", 100 * r / c.mix.hi);
  }
  if (c.mix3.hi > 0) {
    std::snprintf(
        buf, sizeof buf,
        "the same mix with FFMAs reading three registers, as most of the interaction's do: %.4g to %.4g "
        "steps/s (best at %d chains); %s runs at %.2fx its best",
        c.mix3.lo, c.mix3.hi, c.mix3.hi_chains, id.c_str(), r / c.mix3.hi);
    t.note(buf);
  }
  // The goals are interactions/s, set per GPU (harness/bench_goals.h); on a GPU without them the
  // comparable figure is the share of this GPU's own 11-instruction bound, measured above.
  const course::device_info &gpu = c.s.device();
  const bench::gpu_goals *goals = bench::goals_for(gpu);
  if (!goals) {
    t.note(
        "no interactions/s goal is set for " + gpu.name + " (" + std::to_string(gpu.sms) +
        " SMs): the goals are set for the " + bench::goal_gpus_text() +
        ", where 2.3e12 is 79% of the 11-instruction bound; compare the pct_11_bound column with 79% "
        "instead");
  } else {
    const double goal = goals->nbody, raised_goal = goals->nbody_128k;
    const std::string goal_for = bench::goal_for_text(gpu);
    std::snprintf(buf, sizeof buf, ": >= %s interactions/s: %s, %s at %.3fx the goal (%.3f-%.3fx)",
                  bench::e12_text(goal).c_str(), r >= goal ? "met" : "MISSED", id.c_str(), r / goal,
                  lo / goal, hi / goal);
    t.note(goal_for + buf);
    if (c.n != 128 * 1024) {
      t.note(goal_for + ": >= " + bench::e12_text(raised_goal) +
             " interactions/s at N = 128K: not measured (N = " + kilo(c.n) + ", run with --N 128)");
    } else {
      raised_goal_line(c, t, id, r, lo, hi, goal_for, raised_goal);
    }
  }
  t.note("(the book, GK104: 45.2e9 interactions/s, shared memory, unroll 4)");
  c.s.results().param("best_gpu_interactions_per_s", r);
  if (c.ceiling > 0) c.s.results().param("best_pct_fp32_ceiling", 100 * r / c.ceiling);
  if (c.bound11 > 0) c.s.results().param("best_pct_11_bound", 100 * r / c.bound11);
}

// Every single-GPU stage at its best configuration (profiled rows), checked; then both bounds.
void progression_table(context &c) {
  table t("progression",
          "N-body progression at N = " + kilo(c.n) + " (" + std::to_string(c.n) + " bodies)",
          columns({{"stage", 0}, {"config", 0}}, {{"Ginteractions/s", 1},
                                                  {"GFLOP/s_20", 0},
                                                  {"pct_fp32_ceiling", 1},
                                                  {"pct_11_bound", 1},
                                                  {"vs_prev", 2}}));
  double prev_ms = 0;
  for (const auto &st : course::registered<nbody::stage>()) {
    if (!st.forces || !c.s.selected(st.info.id)) continue;  // stage 10: multi_gpu
    if (st.info.todo) {
      t.add_row({st.info.id, std::string("TODO: not yet implemented")});
      continue;
    }
    const nbody::config cfg = c.config_of(st);
    c.poison();
    const auto m = c.s.time(st.info.id, c.forces(st, cfg), c.bytes(c.n), /*profiled=*/true);
    verify_device(c.s, st.info.id, c.body.data(), c.n, c.d_force.get());
    const double ms = m.per_call.median;
    std::vector<cell> row = {st.info.id, config_text(st, cfg)};
    append(row, bench::timing_cells(m));
    append(row, c.rates(per_s(c.n, ms)));
    row.push_back(prev_ms > 0 && ms > 0 ? cell(prev_ms / ms) : cell());
    t.add_row(std::move(row));
    bench::warn_if_noisy(t, st.info.id, m);
    prev_ms = ms;
    if (!c.best.stage || ms < c.best.m.per_call.median) c.best = {&st, cfg, m};
  }
  auto bound_row = [&](const std::string &label, const std::string &config, double r) {
    if (r <= 0 || !c.s.selected(label)) return;
    std::vector<cell> row = {label, config};
    append(row, std::vector<cell>(bench::timing_columns().size()));
    append(row, c.rates(r));
    row.push_back(cell());
    t.add_row(std::move(row));
  };
  bound_row(ceiling_label, "FMA rate / 12", c.ceiling);
  bound_row(bound_label, "FMA rate / 11", c.bound11);
  bound_row(mix_label, "best of 1-8 chains", c.mix.hi);
  bound_row(mix3_label, "best of 1-8 chains", c.mix3.hi);
  plot_hint hint{"bars", "stage", "Ginteractions/s"};
  hint.ceiling_from_row = ceiling_label;
  t.set_plot(hint);
  progression_goals(c, t);
  c.s.finish(std::move(t));
}

// Stage 06's atomics: 3 per column body of each of the T (T - 1) / 2 off-diagonal 32 x 32 tiles,
// and 3 per row body of each warp's run of up to 8 tiles (T = ceil(N / 32)).
double stage06_atomics(std::size_t n) {
  const double T = double((n + 31) / 32);
  double runs = 0;
  for (double I = 0; I < T; ++I) runs += std::ceil((T - I) / 8);
  return 96 * (T * (T - 1) / 2 + runs);
}

// The lab's rows, timed and checked: stage 06, the best stage (brute force), the two pair orders.
struct lab_row {
  std::string label;
  bench::work fn;
  double atomics;  // per call, 0: none
  bench::measurement m;
};
struct lab_times {
  std::vector<lab_row> rows;
  double ms06 = 0, ms_best = 0;
};
lab_times lab_rows(context &c, std::size_t ln, const std::vector<float4> &lbody,
                   const float4 *d_lbody, float4 *d_lforce) {
  auto stage_fn = [=](const nbody::stage *st, nbody::config cfg) -> bench::work {
    return [=](cudaStream_t stream) { st->forces(d_lforce, d_lbody, ln, softening2, cfg, stream); };
  };
  lab_times l;
  const nbody::stage *s06 = find_stage("06");
  if (s06)
    l.rows.push_back({s06->info.id + " (~3 atomics per body per tile)",
                      stage_fn(s06, {}),
                      stage06_atomics(ln),
                      {}});
  const bool best_is_06 = s06 && c.best.stage == s06;
  if (c.best.stage && !best_is_06)
    l.rows.push_back({c.best.stage->info.id + " (best stage, brute force)",
                      stage_fn(c.best.stage, c.best.cfg),
                      0,
                      {}});
  for (auto order : {nbody::lab::pair_order::same_j, nbody::lab::pair_order::cyclic})
    l.rows.push_back({nbody::lab::name(order),
                      [=](cudaStream_t stream) {
                        nbody::lab::forces_symmetric_atomics(d_lforce, d_lbody, ln, softening2,
                                                             order, 256, stream);
                      },
                      double(nbody::lab::atomics(ln)),
                      {}});
  for (std::size_t i = 0; i < l.rows.size(); ++i) {
    lab_row &r = l.rows[i];
    if (!c.s.selected(r.label)) continue;
    CUDA_CHECK(cudaMemset(d_lforce, 0xFF, ln * sizeof(float4)));
    r.m = c.s.time(r.label, r.fn, context::bytes(ln));
    verify_device(c.s, r.label, lbody.data(), ln, d_lforce);
    const bool is_06 = s06 && i == 0,
               is_best =
                   (c.best.stage && !best_is_06 && i == (s06 ? 1u : 0u)) || (best_is_06 && i == 0);
    if (is_06) l.ms06 = r.m.per_call.median;
    if (is_best) l.ms_best = r.m.per_call.median;
  }
  return l;
}

// The lab (14.1.1, figure 14.2): the naive symmetric form beside stage 06 and the best stage.
void lab_table(context &c) {
  const std::size_t ln = c.opt.lab_n_k ? std::size_t(c.opt.lab_n_k) * 1024 : c.n;
  const auto lbody = ln == c.n ? c.body : nbody::random_bodies(ln, seed + 4);
  course::device_buffer<float4> d_lbody(ln), d_lforce(ln);
  CUDA_CHECK(cudaMemcpy(d_lbody.get(), lbody.data(), ln * sizeof(float4), cudaMemcpyHostToDevice));
  std::printf(
      "\nlab: the naive symmetric form at N = %s, %zu pairs and %zu float atomics per call (this takes a while)\n",
      kilo(ln).c_str(), nbody::lab::pairs(ln), nbody::lab::atomics(ln));
  const lab_times l = lab_rows(c, ln, lbody, d_lbody.get(), d_lforce.get());
  table t(
      "lab_symmetric_atomics",
      "Lab (14.1.1, figure 14.2): each pair once, float atomic adds into global memory, at N = " +
          kilo(ln),
      columns({{"version", 0}},
              {{"Ginteractions/s", 1}, {"Gatomics/s", 1}, {"vs_06", 3}, {"vs_best", 3}}));
  for (const auto &r : l.rows) {
    const double ms = r.m.per_call.median;
    if (!(ms > 0)) continue;
    std::vector<cell> row = {r.label};
    append(row, bench::timing_cells(r.m));
    append(row, {per_s(ln, ms) / 1e9, r.atomics > 0 ? cell(r.atomics / (ms * 1e-3) / 1e9) : cell(),
                 l.ms06 > 0 ? cell(l.ms06 / ms) : cell(),
                 l.ms_best > 0 ? cell(l.ms_best / ms) : cell()});
    t.add_row(std::move(row));
    bench::warn_if_noisy(t, r.label, r.m);
  }
  t.set_plot({"bars", "version", "Ginteractions/s"});
  t.note(
      "(interactions/s: N^2 / time, brute-force equivalent, as stage 06; vs_06, vs_best: rate ratios, < 1 slower. "
      "The book gives no figure: \"much slower than brute force, almost unacceptable\")");
  c.s.results().param("lab_n", double(ln));
  c.s.finish(std::move(t));
}

// The rsqrt lab (lab_rsqrt_pipes.cu): stage 08's kernel with its reciprocal square roots placed
// otherwise, at the progression's N, between two rows of stage 08 itself in the lab's blocking
// (R 4, B 256, U 16: the first shows where the variants start, the second how far the GPU drifted
// over the table). Every row checked against the float64 reference; the 128K goal line names the
// fastest row.
void rsqrt_lab_table(context &c) {
  const nbody::stage *s08 = find_stage("08");
  nbody::config cfg08;
  cfg08.rows_per_thread = 4, cfg08.threads = 256, cfg08.unroll = 16;
  struct row_spec {
    std::string label;
    bench::work fn;
    double share;  // on the FMA pipe; < 0: stage 08 itself
  };
  std::vector<row_spec> rows;
  if (s08)
    rows.push_back(
        {"rsqrt lab: " + s08->info.id + " (R 4, B 256, U 16)", c.forces(*s08, cfg08), -1});
  for (auto v : nbody::lab::all_rsqrt_variants)
    rows.push_back({nbody::lab::name(v),
                    [&c, v](cudaStream_t stream) {
                      nbody::lab::forces_rsqrt_variant(c.d_force.get(), c.d_body.get(), c.n,
                                                       softening2, v, stream);
                    },
                    nbody::lab::fma_pipe_share(v)});
  if (s08) rows.push_back({"rsqrt lab: " + s08->info.id + " again", c.forces(*s08, cfg08), -1});
  table t("lab_rsqrt_pipes",
          "Lab: stage 08's reciprocal square roots on the FMA pipe or spread by hand, at N = " +
              kilo(c.n),
          columns({{"version", 0}}, {{"Ginteractions/s", 1}, {"fma_pipe_share", 4}, {"vs_08", 3}}));
  double ms08 = 0, best_ms = 0;
  std::string best;
  bench::measurement best_m;
  for (const auto &r : rows) {
    if (!c.s.selected(r.label)) continue;
    c.poison();
    const auto m = c.s.time(r.label, r.fn, c.bytes(c.n), /*profiled=*/true);
    verify_device(c.s, r.label, c.body.data(), c.n, c.d_force.get());
    const double ms = m.per_call.median;
    if (r.share < 0 && ms08 == 0) ms08 = ms;
    if (ms > 0 && (best_ms == 0 || ms < best_ms)) best_ms = ms, best = r.label, best_m = m;
    std::vector<cell> row = {r.label};
    append(row, bench::timing_cells(m));
    append(row, {per_s(c.n, ms) / 1e9, r.share < 0 ? cell() : cell(r.share),
                 ms08 > 0 && ms > 0 ? cell(ms08 / ms) : cell()});
    t.add_row(std::move(row));
    bench::warn_if_noisy(t, r.label, m);
  }
  t.set_plot({"bars", "version", "Ginteractions/s"});
  t.note(
      "(vs_08: stage 08's first row's time / this row's, > 1 faster; fma_pipe_share: the "
      "interactions whose x^(-3/2) is computed on the FMA pipe, the rest one MUFU.RSQ each)");
  const bench::gpu_goals *goals = bench::goals_for(c.s.device());
  if (goals && !best.empty()) {
    const double goal = goals->nbody_128k, r = per_s(c.n, best_ms);
    char buf[512];
    if (c.n != 128 * 1024)
      std::snprintf(buf, sizeof buf,
                    ": >= %s interactions/s at N = 128K: not measured (N = %s, run with --N 128)",
                    bench::e12_text(goal).c_str(), kilo(c.n).c_str());
    else
      std::snprintf(buf, sizeof buf,
                    ": >= %s interactions/s at N = 128K: %s, fastest row \"%s\" at %.4g "
                    "(%.3fx the goal, %.3f-%.3fx over the repeats)",
                    bench::e12_text(goal).c_str(), r >= goal ? "met" : "MISSED", best.c_str(), r,
                    r / goal, per_s(c.n, best_m.per_call.max) / goal,
                    per_s(c.n, best_m.per_call.min) / goal);
    t.note(bench::goal_for_text(c.s.device()) + buf);
  }
  c.s.finish(std::move(t));
}

// Interactions/s against N, each stage in its progression configuration, every output checked.
void by_n_table(context &c) {
  const std::size_t most = 256 * 1024;
  const auto big = nbody::random_bodies(most, seed + 1);
  course::device_buffer<float4> d_big(most), d_out(most);
  CUDA_CHECK(cudaMemcpy(d_big.get(), big.data(), most * sizeof(float4), cudaMemcpyHostToDevice));
  table t("by_n", "Interactions/s against N (the L2 flushed before each call)",
          columns({{"stage", 0}, {"N", 0}}, {{"Ginteractions/s", 1}}));
  for (const auto &st : course::registered<nbody::stage>()) {
    const std::string &id = st.info.id;
    if (!st.forces || st.info.todo || !c.s.selected(id)) continue;
    if (id.rfind("03", 0) && id.rfind("05", 0) && id.rfind("06", 0) && !st.blocked) continue;
    const nbody::config cfg = c.config_of(st);
    for (std::size_t m = 1024; m <= most; m *= 2) {
      CUDA_CHECK(cudaMemset(d_out.get(), 0xFF, m * sizeof(float4)));
      const auto tm = c.s.time(
          id,
          [&, m](cudaStream_t stream) {
            st.forces(d_out.get(), d_big.get(), m, softening2, cfg, stream);
          },
          context::bytes(m));
      verify_device(c.s, id + " (by N)", big.data(), m, d_out.get());
      std::vector<cell> row = {id, double(m)};
      append(row, bench::timing_cells(tm));
      row.push_back(per_s(m, tm.per_call.median) / 1e9);
      t.add_row(std::move(row));
      bench::warn_if_noisy(t, id + " at N=" + std::to_string(m), tm);
    }
  }
  plot_hint hint{"lines", "N", "Ginteractions/s"};
  hint.series = "stage";
  hint.logx = true;
  t.set_plot(hint);
  c.s.finish(std::move(t));
}

// Table 14.4: the CPU rival, timed on the host (wall time of calls that return with the forces).
void cpu_table(context &c) {
  const nbody::cpu::stage *cpu = nullptr;
  for (const auto &x : course::registered<nbody::cpu::stage>())
    if (!x.info.todo) cpu = &x;
  if (!cpu || c.opt.skip_cpu) return;
  course::thread_pool pool;
  const std::size_t cn = std::size_t(c.opt.cpu_n_k) * 1024;
  const auto cbody = nbody::random_bodies(cn, seed + 2);
  std::vector<float4> out(std::max(c.n, cn));
  table t("cpu",
          "CPU at N = " + kilo(cn) + " (" + std::to_string(pool.size()) +
              " threads), timed on the host",
          columns({{"version", 0}, {"threads", 0}}, {{"Minteractions/s", 0}, {"vs_scalar", 1}}));
  double scalar = 0;
  auto add = [&](const std::string &label, unsigned threads, const std::function<void()> &fn,
                 const std::vector<float4> &b) {
    if (!c.s.selected(label)) return 0.0;
    const auto m = c.s.time_host(label, fn);
    verify(c.s, label, b.data(), b.size(), out.data());
    const double r = per_s(b.size(), m.per_call.median);
    if (threads == 1 && scalar == 0 && label.rfind("scalar", 0) == 0) scalar = r;
    std::vector<cell> row = {label, double(threads)};
    append(row, bench::timing_cells(m));
    append(row, {r / 1e6, scalar > 0 ? cell(r / scalar) : cell()});
    t.add_row(std::move(row));
    bench::warn_if_noisy(t, label, m);
    return r;
  };
  add(
      "scalar AOS (listing 14.2)", 1,
      [&] { nbody::host_forces_aos(out.data(), cbody.data(), cn, softening2); }, cbody);
  for (auto isa : nbody::cpu::all_isas) {
    if (isa == nbody::cpu::isa::scalar || !cpu->supported(isa)) continue;
    add(
        std::string(nbody::cpu::to_string(isa)) + ", 1 thread", 1,
        [&] { cpu->forces(out.data(), cbody.data(), cn, softening2, isa, nullptr); }, cbody);
  }
  const auto widest = cpu->best();
  const std::string wide = std::string(nbody::cpu::to_string(widest)) + " x threads";
  add(
      wide, pool.size(),
      [&] { cpu->forces(out.data(), cbody.data(), cn, softening2, widest, &pool); }, cbody);
  const double big = add(
      wide + ", N = " + kilo(c.n), pool.size(),
      [&] { cpu->forces(out.data(), c.body.data(), c.n, softening2, widest, &pool); }, c.body);
  t.set_plot({"bars", "version", "Minteractions/s"});
  if (big > 0 && c.best.stage) {
    const double gpu = per_s(c.n, c.best.m.per_call.median);
    char buf[256];
    std::snprintf(
        buf, sizeof buf,
        "GPU/CPU at N = %s: %s %.3g / CPU %.3g interactions/s = %.1fx (the book: 8x, GK104 vs two Xeon E5-2670)",
        kilo(c.n).c_str(), c.best.stage->info.id.c_str(), gpu, big, gpu / big);
    t.note(buf);
    c.s.results().param("cpu_interactions_per_s", big);
    c.s.results().param("gpu_over_cpu", gpu / big);
  }
  c.s.finish(std::move(t));
}

// Table 14.3: stage 10 on 1..all visible GPUs, host to host; on one GPU also 2 and 3 parts.
void multi_gpu_table(context &c) {
  const nbody::stage *multi = nullptr;
  for (const auto &st : course::registered<nbody::stage>())
    if (st.forces_host && !st.info.todo) multi = &st;
  if (!multi) return;
  int visible = 0;
  CUDA_CHECK(cudaGetDeviceCount(&visible));
  const std::size_t mn = std::size_t(c.opt.mgpu_n_k) * 1024;
  const auto mbody = nbody::random_bodies(mn, seed + 3);
  course::host_buffer<float4> h_body(mn, course::host_memory::pinned),
      h_force(mn, course::host_memory::pinned);
  std::memcpy(h_body.get(), mbody.data(), mn * sizeof(float4));
  table t("multi_gpu",
          "Stage 10 at N = " + kilo(mn) + ", host to host, copies included (table 14.3)",
          columns({{"setup", 0}, {"gpus", 0}, {"parts", 0}},
                  {{"Ginteractions/s", 1}, {"speedup", 2}, {"efficiency_pct", 1}}));
  double one = 0, two = 0;
  auto setup = [&](int gpus, int parts) {
    const std::string label = multi->info.id + " on " + std::to_string(gpus) + " GPU" +
                              (gpus > 1 ? "s" : "") +
                              (parts ? ", " + std::to_string(parts) + " parts" : std::string());
    if (!c.s.selected(label)) return;
    nbody::config cfg;
    cfg.gpus = gpus, cfg.parts = parts;
    course::test::poison_host(h_force.get(), mn);
    const bool first = gpus == 1 && parts == 0;  // the stage's own row: profiled
    const auto m = c.s.time_host(
        label, [&] { multi->forces_host(h_force.get(), h_body.get(), mn, softening2, cfg); },
        first);
    verify(c.s, label, mbody.data(), mn, h_force.get());
    const double r = per_s(mn, m.per_call.median);
    if (first) one = r;
    if (gpus == 2 && parts == 0) two = r;
    std::vector<cell> row = {label, double(gpus), double(parts ? parts : gpus)};
    append(row, bench::timing_cells(m));
    append(row, {r / 1e9, one > 0 ? cell(r / one) : cell(),
                 one > 0 ? cell(100 * r / (one * gpus)) : cell()});
    t.add_row(std::move(row));
    bench::warn_if_noisy(t, label, m);
  };
  for (int g = 1; g <= visible; ++g) setup(g, 0);
  if (visible == 1)
    for (int parts : {2, 3}) setup(1, parts);
  t.set_plot({"bars", "setup", "Ginteractions/s"});
  char buf[256];
  if (one > 0 && two > 0)
    std::snprintf(buf, sizeof buf, "goal on two GPUs at N = 256K: >= 1.8x one GPU: %s, %.2fx",
                  two / one >= 1.8 ? "met" : "MISSED", two / one);
  else
    std::snprintf(
        buf, sizeof buf,
        "goal on two GPUs at N = 256K: >= 1.8x one GPU: not measured (%d GPU(s) visible here)",
        visible);
  t.note(buf);
  c.s.finish(std::move(t));
}

void body(bench::session &s, const options_t &opt) {
  context c(s, opt);
  s.results().param("n", double(c.n));
  s.results().param("softening", 0.01);
  measure_bounds(c);
  measure_mix(c);
  unroll_table(c);    // picks the unroll factors of the progression
  blocking_table(c);  // and the blocking of stages 07 and 08
  progression_table(c);
  lab_table(c);
  rsqrt_lab_table(c);
  by_n_table(c);
  cpu_table(c);
  multi_gpu_table(c);
}

}  // namespace

int main(int argc, char **argv) {
  options_t opt;
  return bench::bench_main(
      argc, argv,
      {"bench_nbody", "14-nbody", "Chapter 14: N-body",
       "Chapter 14: N-body, every stage, the CPU and several GPUs."},
      [&](course::options &cli) {
        cli.add("N", opt.n_k, 1, 1024, "bodies of the progression, in thousands (x 1024)")
            .add("lab-N", opt.lab_n_k, 0, 1024,
                 "bodies of the symmetric-atomics lab, in thousands (x 1024); 0: --N")
            .add("cpu-N", opt.cpu_n_k, 1, 1024, "bodies of the CPU table, in thousands (x 1024)")
            .add("mgpu-N", opt.mgpu_n_k, 1, 4096,
                 "bodies of the multi-GPU table, in thousands (x 1024)")
            .flag("skip-cpu", opt.skip_cpu, "leave out the CPU table");
      },
      [&](bench::session &s) { body(s, opt); });
}
