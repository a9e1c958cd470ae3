// SPDX-License-Identifier: BSD-3-Clause
// Chapter 14 benchmark: every N-body stage, the CPU rival and several GPUs, in one run.
//
// Part 1 (--N thousands of bodies, default 128 = 131072): the progression at one N: each GPU
// stage's time, body-body interactions per second (N^2 / time; stage 06 computes about half the
// pairs and is reported in the same brute-force-equivalent unit), the book's 20-flop GFLOP/s
// beside it, and the rate against two bounds derived from the FMA rate measured in this run: the
// FP32-pipe ceiling, FMA rate / 12 (listing 14.1's 12 FP32-pipe instructions per interaction), and
// the mass-scaled form's own bound, FMA rate / 11 (stage 08's 11). Goals (reported, not asserted):
// the best >= 2.0e12 interactions/s (met on the H100), and >= 2.3e12 at N = 128K (issue 20).
// Part 1b, a lab (14.1.1, figure 14.2): the book's naive symmetric form, each pair once with two
// float atomic adds into global memory (lab_symmetric_atomics.cu), in its two pair orders, beside
// stage 06 and the best stage at the same N (--lab-N, default --N).
// Part 2: the unroll sweeps of stages 02 and 03 (tables 14.1 and 14.2), and the blocking of
// stages 07 (listing 14.1's interaction: 12 FP32-pipe instructions) and 08 (mass-scaled: 11); the
// progression shows each at its best blocking.
// Part 3: interactions/s against N for stages 03, 05, 06, 07 and 08.
// Part 4: the CPU (--cpu-N, default 16K bodies): scalar (listing 14.2), each SIMD width on one
// thread, the widest on every core (table 14.4); the widest on every core again at --N, for the
// GPU/CPU ratio.
// Part 5: several GPUs (--mgpu-N, default 256K): stage 10 on 1..all visible GPUs (table 14.3's
// efficiency: rate / (GPUs x the 1-GPU rate)), host to host, copies included; on one GPU it also
// shows the cost of 2 and 3 parts.
// Every result is checked against the float64 reference on 512 sampled rows; a wrong one ends
// the program with status 1.
#include "cpu_nbody.h"
#include "host_nbody.h"
#include "lab_symmetric_atomics.h"
#include "nbody.h"

#include "common/cli.h"
#include "common/device.h"
#include "common/memory.h"
#include "common/parallel.h"
#include "harness/bench.h"
#include "harness/test_support.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

using course::bench::cell;
using course::bench::table;

namespace {

constexpr std::uint64_t seed = 14;
constexpr float softening2 = 0.01f * 0.01f;
constexpr std::size_t sampled_rows = 512;

struct options_t {
  std::int64_t n_k = 128, lab_n_k = 0, cpu_n_k = 16, mgpu_n_k = 256, repeats = 10;
  std::string results = "results";
  bool skip_cpu = false;
};

bool ok = true;

// Checks got against the float64 reference on evenly spaced rows.
void verify(const std::string &who, const std::vector<float4> &body, const float4 *got) {
  const std::size_t n = body.size();
  const std::size_t step = std::max<std::size_t>(1, n / sampled_rows);
  for (std::size_t i = 0; i < n; i += step) {
    const auto want = nbody::host_force_f64(body.data(), n, i, softening2);
    const double err = nbody::relative_error(got[i], want);
    if (!(err <= nbody::error_bound(n)) || got[i].w != 0.f) {
      std::fprintf(stderr, "WRONG RESULT: %s, n=%zu: force [%zu] relative error %g > %g\n", who.c_str(), n, i, err,
                   nbody::error_bound(n));
      ok = false;
      return;
    }
  }
}
void verify_device(const std::string &who, const std::vector<float4> &body, const float4 *d_got) {
  std::vector<float4> got(body.size());
  CUDA_CHECK(cudaMemcpy(got.data(), d_got, got.size() * sizeof(float4), cudaMemcpyDeviceToHost));
  verify(who, body, got.data());
}

double rate(std::size_t n, double ms) { return double(n) * double(n) / (ms * 1e-3); }
std::string kilo(std::size_t n) { return std::to_string(n / 1024) + "K"; }

}  // namespace

int main(int argc, char **argv) {
  options_t opt;
  course::options cli("bench_nbody", "Chapter 14: N-body, every stage, the CPU and several GPUs.");
  cli.add("N", opt.n_k, 1, 1024, "bodies of the progression, in thousands (x 1024)")
      .add("lab-N", opt.lab_n_k, 0, 1024, "bodies of the symmetric-atomics lab, in thousands (x 1024); 0: --N")
      .add("cpu-N", opt.cpu_n_k, 1, 1024, "bodies of the CPU table, in thousands (x 1024)")
      .add("mgpu-N", opt.mgpu_n_k, 1, 4096, "bodies of the multi-GPU table, in thousands (x 1024)")
      .add("repeats", opt.repeats, 3, 1000, "timed repeats per measurement (the median is reported)")
      .add("results", opt.results, "directory for the CSV and JSON results")
      .flag("skip-cpu", opt.skip_cpu, "leave out the CPU table");
  cli.parse(argc, argv);
  const int reps = int(opt.repeats);
  return course::bench::run("bench_nbody", "14-nbody", "Chapter 14: N-body", opt.results, [&](course::bench::report &rep) {
    const std::size_t n = std::size_t(opt.n_k) * 1024;
    rep.param("n", double(n));
    rep.param("softening", 0.01);

    // --- the ceiling ------------------------------------------------------------------------
    const double fma_tflops = course::bench::fma_tflops();
    // Both bounds from the FMA rate measured here (FFMA/s = TFLOP/s / 2): the FP32 pipe issues one
    // FP32 instruction per lane per clock, so an interaction of k FP32-pipe instructions runs at
    // most FFMA/s / k (the MUFU.RSQ and the shared loads take issue slots too: a bound, not a target).
    const double fma_per_s = fma_tflops * 1e12 / 2;
    const double ceiling = fma_per_s / nbody::fp32_instructions_per_interaction;
    const double bound11 = fma_per_s / nbody::mass_scaled_fp32_instructions_per_interaction;
    rep.param("fma_tflops", fma_tflops);
    rep.param("fp32_ceiling_interactions_per_s", ceiling);
    rep.param("mass_scaled_bound_interactions_per_s", bound11);
    std::printf("\nFP32 FMA rate measured: %.1f TFLOP/s = %.4g FFMA/s -> FP32-pipe ceiling (12 instructions, listing 14.1) "
                "%.4g interactions/s; the mass-scaled form's own bound (11 instructions) %.4g interactions/s\n",
                fma_tflops, fma_per_s, ceiling, bound11);

    const auto body = nbody::random_bodies(n, seed);
    course::device_buffer<float4> d_body(n), d_force(n);
    CUDA_CHECK(cudaMemcpy(d_body.get(), body.data(), n * sizeof(float4), cudaMemcpyHostToDevice));
    course::stream s;
    auto clear = [&] { CUDA_CHECK(cudaMemset(d_force.get(), 0xFF, n * sizeof(float4))); };
    auto time_stage = [&](const nbody::stage &st, const nbody::config &cfg, std::size_t m, const float4 *in, int r) {
      return course::bench::time_device(
          [&](cudaStream_t stream) { st.forces(d_force.get(), in, m, softening2, cfg, stream); }, s, 1, r);
    };

    // --- Part 2 first (it picks the unroll factors and blocking of Part 1) ----------------------
    table unroll("unroll", "Unroll sweeps at N = " + kilo(n) + " (tables 14.1 and 14.2), 10^9 interactions/s",
                 {{"unroll", 0}, {"02_naive_aos", 1}, {"03_shared_tiled", 1}});
    std::vector<std::pair<std::string, int>> best_unroll;
    {
      std::vector<std::vector<cell>> rows;
      for (int u : {1, 2, 4, 8, 16, 32}) rows.push_back({double(u), {}, {}});
      for (const auto &st : course::registered<nbody::stage>()) {
        if (!st.unroll_sweep || st.info.todo) continue;
        const int col = st.info.id.rfind("02", 0) == 0 ? 1 : 2;
        double best = 0;
        int best_u = 4;
        for (std::size_t k = 0; k < rows.size(); ++k) {
          nbody::config cfg;
          cfg.unroll = 1 << k;
          const double g = rate(n, time_stage(st, cfg, n, d_body.get(), std::max(3, reps / 2)).median_ms) / 1e9;
          rows[k][col] = g;
          if (g > best) best = g, best_u = cfg.unroll;
        }
        best_unroll.push_back({st.info.id, best_u});
      }
      for (auto &r : rows) unroll.add_row(r);
    }
    unroll.set_plot(R"({"kind": "lines", "x": "unroll", "y": "03_shared_tiled", "logx": true})");
    unroll.print();
    std::printf("(the book, GK104, table 14.1: 25e9/s without unroll, 34.3e9 with 16 (+37%%); table 14.2: best unroll 4, +18%%)\n");
    rep.add(unroll);

    table tune("blocking", "Stages 07 and 08: rows per thread x threads per block x unroll at N = " + kilo(n),
               {{"stage", 0}, {"rows_per_thread", 0}, {"threads", 0}, {"unroll", 0}, {"time_ms", 3},
                {"Ginteractions/s", 1}, {"pct_fp32_ceiling", 1}, {"pct_11_bound", 1}});
    // The best blocking of each register-blocked stage (07: listing 14.1's form, 08: mass-scaled).
    std::vector<std::pair<std::string, nbody::config>> best_blocking;
    for (const auto &st : course::registered<nbody::stage>()) {
      if (!st.blocked || st.info.todo) continue;
      double best = 0;
      nbody::config best_cfg;
      for (int r : {1, 2, 4, 8}) {
        for (int b : {128, 256}) {
          for (int u : {8, 16, 32}) {
            nbody::config cfg;
            cfg.rows_per_thread = r;
            cfg.threads = b;
            cfg.unroll = u;
            const auto t = time_stage(st, cfg, n, d_body.get(), reps);
            const double g = rate(n, t.median_ms);
            tune.add_row({st.info.id, double(r), double(b), double(u), t.median_ms, g / 1e9, 100 * g / ceiling,
                          100 * g / bound11});
            if (g > best) best = g, best_cfg = cfg;
          }
        }
      }
      best_blocking.push_back({st.info.id, best_cfg});
    }
    if (!best_blocking.empty()) {
      tune.print();
      rep.add(tune);
    }
    auto blocking_of = [&](const std::string &id) {
      for (auto &[stage, cfg] : best_blocking)
        if (stage == id) return cfg;
      return nbody::config{};
    };
    auto blocking_label = [&](const nbody::config &c) {
      return "R " + std::to_string(c.rows_per_thread) + ", threads " + std::to_string(c.threads) + ", unroll " +
             std::to_string(c.unroll);
    };

    // --- Part 1: the progression ---------------------------------------------------------------
    table prog("progression", "N-body progression at N = " + kilo(n) + " (" + std::to_string(n) + " bodies)",
               {{"stage", 0}, {"config", 0}, {"time_ms", 3}, {"Ginteractions/s", 1}, {"GFLOP/s_20", 0},
                {"pct_fp32_ceiling", 1}, {"pct_11_bound", 1}, {"vs_prev", 2}});
    double prev = 0, best_gpu = 0;
    std::string best_stage;
    const nbody::stage *best_st = nullptr;
    nbody::config best_cfg;
    auto measure = [&](const nbody::stage &st, const std::string &name, const nbody::config &cfg, const std::string &label) {
      clear();
      const auto t = time_stage(st, cfg, n, d_body.get(), reps);
      CUDA_CHECK(cudaStreamSynchronize(s));
      verify_device(name, body, d_force.get());
      const double g = rate(n, t.median_ms);
      prog.add_row({name, label, t.median_ms, g / 1e9, g * nbody::flops_per_interaction / 1e9, 100 * g / ceiling,
                    100 * g / bound11, prev > 0 ? cell(g / prev) : cell()});
      prev = g;
      if (g > best_gpu) best_gpu = g, best_stage = name, best_st = &st, best_cfg = cfg;
    };
    for (const auto &st : course::registered<nbody::stage>()) {
      if (!st.forces) continue;  // stage 10: Part 5
      if (st.info.todo) {
        prog.add_row({st.info.id, std::string("TODO: not yet implemented"), {}, {}, {}, {}, {}, {}});
        continue;
      }
      if (st.blocked) {  // stages 07 and 08 at their best blocking
        measure(st, st.info.id, blocking_of(st.info.id), blocking_label(blocking_of(st.info.id)));
        continue;
      }
      nbody::config cfg;
      std::string label = "threads 256";
      for (auto &[id, u] : best_unroll)
        if (id == st.info.id) cfg.unroll = u, label += ", unroll " + std::to_string(u);
      if (st.info.id.rfind("04", 0) == 0) label += ", 4000 bodies/pass";
      if (st.info.id.rfind("06", 0) == 0) label = "4 warps, N^2/2 pairs";
      measure(st, st.info.id, cfg, label);
    }
    prog.add_row({std::string("FP32-pipe ceiling"), std::string("FMA rate / 12"), {}, ceiling / 1e9,
                  ceiling * nbody::flops_per_interaction / 1e9, 100.0, 100 * ceiling / bound11, {}});
    prog.add_row({std::string("mass-scaled bound"), std::string("FMA rate / 11"), {}, bound11 / 1e9,
                  bound11 * nbody::flops_per_interaction / 1e9, 100 * bound11 / ceiling, 100.0, {}});
    prog.set_plot(R"({"kind": "bars", "x": "stage", "y": "Ginteractions/s", "ceiling_from_row": "FP32-pipe ceiling"})");
    prog.print();
    std::printf("best single-GPU stage: %s, %.4g interactions/s = %.1f%% of the 12-instruction FP32-pipe ceiling "
                "(%.4g) and %.1f%% of the mass-scaled form's own 11-instruction bound (%.4g)\n",
                best_stage.c_str(), best_gpu, 100 * best_gpu / ceiling, ceiling, 100 * best_gpu / bound11, bound11);
    std::printf("goal >= 2.0e12 interactions/s: %s; goal >= 2.3e12 at N = 128K (issue 20): %s\n",
                best_gpu >= 2.0e12 ? "met" : "MISSED",
                n != 128 * 1024 ? "not measured (N is not 128K)" : best_gpu >= 2.3e12 ? "met" : "MISSED");
    std::printf("(the book, GK104: 45.2e9 interactions/s, shared memory, unroll 4)\n");
    rep.param("best_gpu_interactions_per_s", best_gpu);
    rep.param("best_pct_fp32_ceiling", 100 * best_gpu / ceiling);
    rep.param("best_pct_11_bound", 100 * best_gpu / bound11);
    rep.add(prog);

    // --- Part 1b: the lab, the book's naive symmetric form (two float atomic adds per pair) ------
    {
      const std::size_t ln = opt.lab_n_k ? std::size_t(opt.lab_n_k) * 1024 : n;
      const auto lbody = ln == n ? body : nbody::random_bodies(ln, seed + 4);
      course::device_buffer<float4> d_lbody(ln), d_lforce(ln);
      CUDA_CHECK(cudaMemcpy(d_lbody.get(), lbody.data(), ln * sizeof(float4), cudaMemcpyHostToDevice));
      const int lab_reps = std::max(3, reps / 3);
      table lab("lab_symmetric_atomics",
                "Lab (14.1.1, figure 14.2): each pair once, two float atomic adds into global memory, at N = " + kilo(ln),
                {{"version", 0}, {"time_ms", 3}, {"Ginteractions/s", 1}, {"Gatomics/s", 1}, {"vs_06", 3}, {"vs_best", 3}});
      std::printf("\nlab: the naive symmetric form at N = %s, %zu pairs and %zu float atomics per call (this takes a while)\n",
                  kilo(ln).c_str(), nbody::lab::pairs(ln), nbody::lab::atomics(ln));
      // Each row: one call's median time, checked against the float64 reference afterwards.
      auto timed = [&](const std::string &who, const std::function<void(cudaStream_t)> &fn) {
        CUDA_CHECK(cudaMemset(d_lforce.get(), 0xFF, ln * sizeof(float4)));
        const auto t = course::bench::time_device(fn, s, 1, lab_reps);
        CUDA_CHECK(cudaStreamSynchronize(s));
        verify_device(who, lbody, d_lforce.get());
        return t.median_ms;
      };
      auto stage_ms = [&](const nbody::stage &st, const nbody::config &cfg) {
        return timed(st.info.id, [&](cudaStream_t stream) { st.forces(d_lforce.get(), d_lbody.get(), ln, softening2, cfg, stream); });
      };
      double ms06 = 0, ms_best = 0;
      for (const auto &st : course::registered<nbody::stage>())
        if (st.forces && !st.info.todo && st.info.id.rfind("06", 0) == 0) ms06 = stage_ms(st, nbody::config{});
      if (best_st) ms_best = stage_ms(*best_st, best_cfg);
      auto add = [&](const std::string &who, double ms, double atomics) {
        lab.add_row({who, ms, rate(ln, ms) / 1e9, atomics > 0 ? cell(atomics / (ms * 1e-3) / 1e9) : cell(),
                     ms06 > 0 ? cell(ms06 / ms) : cell(), ms_best > 0 ? cell(ms_best / ms) : cell()});
      };
      if (ms06 > 0) {
        // Stage 06's atomics: 3 per column body of each of the T (T - 1) / 2 off-diagonal 32 x 32
        // tiles, and 3 per row body of each warp's run of up to 8 tiles (T = ceil(N / 32)).
        const double T = double((ln + 31) / 32);
        double runs = 0;
        for (double I = 0; I < T; ++I) runs += std::ceil((T - I) / 8);
        add("06_symmetric_tiles (~3 atomics per body per tile)", ms06, 96 * (T * (T - 1) / 2 + runs));
      }
      if (ms_best > 0 && best_stage.rfind("06", 0) != 0) add(best_stage + " (best stage, brute force)", ms_best, 0);
      for (auto order : {nbody::lab::pair_order::same_j, nbody::lab::pair_order::cyclic}) {
        const double ms = timed(nbody::lab::name(order), [&](cudaStream_t stream) {
          nbody::lab::forces_symmetric_atomics(d_lforce.get(), d_lbody.get(), ln, softening2, order, 256, stream);
        });
        add(nbody::lab::name(order), ms, double(nbody::lab::atomics(ln)));
      }
      lab.set_plot(R"({"kind": "bars", "x": "version", "y": "Ginteractions/s"})");
      lab.print();
      std::printf("(interactions/s: N^2 / time, brute-force equivalent, as stage 06; vs_06, vs_best: rate ratios, < 1 slower. "
                  "The book gives no figure: \"much slower than brute force, almost unacceptable\")\n");
      rep.param("lab_n", double(ln));
      rep.add(lab);
    }

    // --- Part 3: against N -----------------------------------------------------------------------
    table by_n("by_n", "Interactions/s against N", {{"stage", 0}, {"N", 0}, {"Ginteractions/s", 1}});
    {
      const std::size_t most = 256 * 1024;
      const auto big = nbody::random_bodies(most, seed + 1);
      course::device_buffer<float4> d_big(most);
      course::device_buffer<float4> d_out(most);
      CUDA_CHECK(cudaMemcpy(d_big.get(), big.data(), most * sizeof(float4), cudaMemcpyHostToDevice));
      for (const auto &st : course::registered<nbody::stage>()) {
        if (!st.forces || st.info.todo) continue;
        const std::string &id = st.info.id;
        if (id.rfind("03", 0) && id.rfind("05", 0) && id.rfind("06", 0) && !st.blocked) continue;
        nbody::config cfg;
        if (st.blocked) cfg = blocking_of(id);
        for (std::size_t m = 1024; m <= most; m *= 2) {
          const auto t = course::bench::time_device(
              [&](cudaStream_t stream) { st.forces(d_out.get(), d_big.get(), m, softening2, cfg, stream); }, s, 1,
              std::max(3, reps / 2));
          by_n.add_row({id, double(m), rate(m, t.median_ms) / 1e9});
        }
      }
    }
    by_n.set_plot(R"({"kind": "lines", "x": "N", "y": "Ginteractions/s", "series": "stage", "logx": true})");
    by_n.print();
    rep.add(by_n);

    // --- Part 4: the CPU -------------------------------------------------------------------------
    const nbody::cpu::stage *cpu = nullptr;
    for (const auto &c : course::registered<nbody::cpu::stage>())
      if (!c.info.todo) cpu = &c;
    if (cpu && !opt.skip_cpu) {
      course::thread_pool pool;
      const std::size_t cn = std::size_t(opt.cpu_n_k) * 1024;
      const auto cbody = nbody::random_bodies(cn, seed + 2);
      std::vector<float4> out(std::max(n, cn));
      table ct("cpu", "CPU at N = " + kilo(cn) + " (" + std::to_string(pool.size()) + " threads), 10^6 interactions/s",
               {{"version", 0}, {"threads", 0}, {"time_ms", 1}, {"Minteractions/s", 0}, {"vs_scalar", 1}});
      double scalar_rate = 0;
      auto add = [&](const std::string &name, unsigned threads, const std::function<void()> &fn, std::size_t m,
                     const std::vector<float4> &b) {
        const auto t = course::bench::time_host(fn, 1, 3);
        verify(name, b, out.data());
        const double r = rate(m, t.median_ms);
        if (scalar_rate == 0) scalar_rate = r;
        ct.add_row({name, double(threads), t.median_ms, r / 1e6, r / scalar_rate});
        return r;
      };
      add("scalar AOS (listing 14.2)", 1, [&] { nbody::host_forces_aos(out.data(), cbody.data(), cn, softening2); }, cn, cbody);
      for (auto isa : nbody::cpu::all_isas) {
        if (isa == nbody::cpu::isa::scalar || !cpu->supported(isa)) continue;
        add(std::string(nbody::cpu::to_string(isa)) + ", 1 thread", 1,
            [&] { cpu->forces(out.data(), cbody.data(), cn, softening2, isa, nullptr); }, cn, cbody);
      }
      const auto widest = cpu->best();
      add(std::string(nbody::cpu::to_string(widest)) + " x threads", pool.size(),
          [&] { cpu->forces(out.data(), cbody.data(), cn, softening2, widest, &pool); }, cn, cbody);
      const double cpu_big = add(std::string(nbody::cpu::to_string(widest)) + " x threads, N = " + kilo(n), pool.size(),
                                 [&] { cpu->forces(out.data(), body.data(), n, softening2, widest, &pool); }, n, body);
      ct.set_plot(R"({"kind": "bars", "x": "version", "y": "Minteractions/s"})");
      ct.print();
      std::printf("GPU/CPU at N = %s: %s %.3g / CPU %.3g interactions/s = %.1fx (the book: 8x, GK104 vs two Xeon E5-2670)\n",
                  kilo(n).c_str(), best_stage.c_str(), best_gpu, cpu_big, best_gpu / cpu_big);
      rep.param("cpu_interactions_per_s", cpu_big);
      rep.param("gpu_over_cpu", best_gpu / cpu_big);
      rep.add(ct);
    }

    // --- Part 5: several GPUs --------------------------------------------------------------------
    const nbody::stage *multi = nullptr;
    for (const auto &st : course::registered<nbody::stage>())
      if (st.forces_host && !st.info.todo) multi = &st;
    if (multi) {
      int visible = 0;
      CUDA_CHECK(cudaGetDeviceCount(&visible));
      const std::size_t mn = std::size_t(opt.mgpu_n_k) * 1024;
      const auto mbody = nbody::random_bodies(mn, seed + 3);
      course::host_buffer<float4> h_body(mn, course::host_memory::pinned), h_force(mn, course::host_memory::pinned);
      std::memcpy(h_body.get(), mbody.data(), mn * sizeof(float4));
      table mt("multi_gpu", "Stage 10 at N = " + kilo(mn) + ", host to host (table 14.3)",
               {{"setup", 0}, {"gpus", 0}, {"parts", 0}, {"time_ms", 2}, {"Ginteractions/s", 1}, {"speedup", 2}, {"efficiency_pct", 1}});
      double one = 0;
      auto run = [&](int gpus, int parts) {
        nbody::config cfg;
        cfg.gpus = gpus;
        cfg.parts = parts;
        course::test::poison_host(h_force.get(), mn);
        const auto t = course::bench::time_host([&] { multi->forces_host(h_force.get(), h_body.get(), mn, softening2, cfg); },
                                                1, std::max(3, reps / 3));
        verify("10 on " + std::to_string(gpus) + " GPU(s)", mbody, h_force.get());
        const double r = rate(mn, t.median_ms);
        if (one == 0) one = r;
        mt.add_row({std::to_string(gpus) + " GPU" + (gpus > 1 ? "s" : "") + (parts ? ", " + std::to_string(parts) + " parts" : std::string()),
                    double(gpus), double(parts ? parts : gpus), t.median_ms, r / 1e9, r / one, 100 * r / (one * gpus)});
      };
      for (int g = 1; g <= visible; ++g) run(g, 0);
      if (visible == 1)
        for (int parts : {2, 3}) run(1, parts);
      mt.set_plot(R"({"kind": "bars", "x": "setup", "y": "Ginteractions/s"})");
      mt.print();
      std::printf("goal on two H200 at N = 256K: >= 1.8x one GPU (%d GPU(s) visible here)\n", visible);
      rep.add(mt);
    }
    return ok;
  });
}
