// SPDX-License-Identifier: BSD-3-Clause
// Chapter 11 benchmark: every stage of the chapter, its ceilings and cuBLAS, in one run. One
// function per table, each declaring its stages, baseline and ceilings (harness/bench_decl.h);
// the measuring frame (options, adaptive repeats, L2 flush, interleaving, NVTX profile ranges,
// failure accounting) is harness/bench_session.h.
//
// Part 1, device memory (--deviceN Mfloats, default 256M): each device stage swept over block
// size x unroll (listing 11.3's table, a quick look per cell), then the progression table at each
// stage's best configuration, against the device-to-device copy ceiling and cublasSaxpy timed the
// same way; then the fastest stage and cuBLAS interleaved (A-B-A-B...), aligned and with x offset
// by one float (the fastest stage that accepts it), the ratio with its range over the pairs; then
// a lab (11.1): stage 01's loop under #pragma unroll against stage 02's templated unroll.
// Part 2, through the host (--N Mfloats, default 128M as in the book): every host stage's wall
// time, split into phases where the stage allows it, the streams table (11.3), and the floor:
// both inputs copied in while the output is copied out, on pinned memory.
// Every stage's output is checked; a wrong result makes the program exit 1.
#include "host_context.h"
#include "streaming.h"

#include "common/cli.h"
#include "common/device.h"
#include "common/random.h"
#include "common/random_fill.h"
#include "harness/bench.h"
#include "harness/bench_cublas.h"
#include "harness/bench_decl.h"
#include "harness/bench_session.h"
#include "harness/test_support.h"

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace bench = course::bench;
using bench::cell;
using bench::plot_hint;
using bench::column;
using bench::table;

namespace {

constexpr std::size_t mega = std::size_t(1) << 20;
constexpr float alpha = 2.5f;
const std::string blas_label = "cuBLAS cublasSaxpy";
const std::string d2d_label = "ceiling: D2D cudaMemcpy";
const std::string copy_label = "ceiling: float4 copy kernel";
const std::string floor_label = "floor: overlapped pinned copies";

struct options_t {
  // The defaults: chapters/11-streaming/lessons.toml's [workload.bench] (COURSE_BENCH_*, from
  // CMake).
  std::int64_t n_host_m = COURSE_BENCH_N, n_device_m = COURSE_BENCH_DEVICEN, max_streams = 8;
  std::string part = "all";
};

// Checks every element of out against alpha*x + y (float64, same bound as the tests).
template <class X, class Y, class Out>
bool verify(bench::session &s, const std::string &who, std::size_t n, X x, Y y, Out out) {
  auto r = course::test::check_elements(
      n, out, [&](std::size_t i) { return alpha * double(x(i)) + double(y(i)); },
      [&](std::size_t i, float g, double want) {
        return course::test::close(
            g, want, std::fabs(alpha * double(x(i))) + std::fabs(double(y(i))), 2 * FLT_EPSILON);
      });
  if (!r.ok()) s.fail(course::test::describe(who, "benchmark", n, r));
  return r.ok();
}

// ---- part 1: device memory --------------------------------------------------------------------
// A stage at the configuration its sweep chose.
struct tuned {
  const streaming::device_stage *stage = nullptr;
  streaming::launch_config cfg;
};

struct device_context {
  bench::session &s;
  std::size_t n;
  static constexpr std::uint64_t seed = 11;
  course::device_buffer<float> x, y, out, y_blas;
  bench::cublas_handle blas;
  std::vector<tuned> tuned_stages;  // each stage at its sweep's configuration
  tuned fastest;

  device_context(bench::session &session, std::size_t n_)
      : s(session),
        n(n_),
        x(n_ + 1),
        y(n_ + 1),
        out(n_ + 1),
        y_blas(n_ + 1),
        blas(session.stream()) {
    course::fill_random_device(x.get(), n + 1, seed);
    course::fill_random_device(y.get(), n + 1, seed + 1);
    // cublasSaxpy is in place (y = alpha*x + y); timing it over and over on one y is the same
    // traffic.
    CUDA_CHECK(
        cudaMemcpy(y_blas.get(), y.get(), (n + 1) * sizeof(float), cudaMemcpyDeviceToDevice));
  }
  std::size_t bytes(std::size_t m) const {
    return 3 * m * sizeof(float);
  }  // x and y read, out written
  bench::work stage(const streaming::device_stage &st, const streaming::launch_config &cfg,
                    std::size_t x_offset = 0) {
    const std::size_t m = n - x_offset;
    return [this, &st, cfg, x_offset, m](cudaStream_t stream) {
      st.saxpy(out.get(), x.get() + x_offset, y.get(), m, alpha, cfg, stream);
    };
  }
  bench::work library(std::size_t x_offset = 0) {
    const std::size_t m = n - x_offset;
    // y = alpha * x + y, in place.
    return [this, x_offset, m](cudaStream_t) {
      bench::cublas_check(cublasSaxpy_64(blas.get(), std::int64_t(m), &alpha, x.get() + x_offset, 1,
                                         y_blas.get(), 1),
                          "cublasSaxpy_64");
    };
  }
  // out[0, n - x_offset) against alpha * x[x_offset + i] + y[i].
  void check(const std::string &who, std::size_t x_offset = 0) {
    CUDA_CHECK(cudaStreamSynchronize(s.stream()));
    const std::size_t m = n - x_offset;
    std::vector<float> h(m);
    CUDA_CHECK(cudaMemcpy(h.data(), out.get(), m * sizeof(float), cudaMemcpyDeviceToHost));
    verify(
        s, who, m, [&](std::size_t i) { return course::random_float(seed, i + x_offset); },
        [&](std::size_t i) { return course::random_float(seed + 1, i); },
        [&](std::size_t i) { return h[i]; });
  }
};

const std::vector<int> threads_axis = {32, 64, 128, 256, 512, 1024};

// A stage's sweep over block size x unroll (listing 11.3's table): the best configuration.
std::optional<streaming::launch_config> sweep(device_context &c,
                                              const streaming::device_stage &stage) {
  bench::grid_spec g{
      "sweep_" + stage.info.id,
      "Stage " + stage.info.id + ": GB/s by unroll (rows) and threads per block (columns)",
      "unroll",
      "threads",
      "GB/s",
      {},
      threads_axis,
      double(c.bytes(c.n))};
  for (int u = 1; u <= (stage.unrolls ? 16 : 1); ++u) g.rows.push_back(u);
  auto r = bench::sweep_grid(
      c.s, g,
      [&](int u, int t) {
        streaming::launch_config cfg;  // "-" in the table: too many registers for this block size
        cfg.threads = t;
        cfg.unroll = u;
        return c.stage(stage, cfg);
      },
      c.bytes(c.n));
  if (!r.best) return std::nullopt;
  streaming::launch_config best;
  best.unroll = r.best->first;
  best.threads = r.best->second;
  if (stage.unrolls) {
    c.s.finish(std::move(r.t));
  } else {
    std::printf("\nStage %s (no unroll): best block size %d threads\n", stage.info.id.c_str(),
                best.threads);
    c.s.results().add(std::move(r.t));
  }
  return best;
}

void device_progression_table(device_context &c) {
  bench::declared_progression prog(
      c.s, {"device_progression",
            "Device SAXPY progression (" + std::to_string(c.n / mega) + "M floats, 12 B/element)",
            "config", "GB/s", double(c.bytes(c.n)), "%d2d_copy", "vs_cuBLAS",
            plot_hint::stage_bars("GB/s", d2d_label, "device-to-device memcpy")});
  if (const auto blas = prog.baseline(blas_label, c.library(), c.bytes(c.n)))
    c.s.results().param("cublas_saxpy_gbs", c.bytes(c.n) / (blas->per_call.median * 1e6));
  const std::size_t bytes = c.n * sizeof(float);
  const double d2d = prog.ceiling(d2d_label, "2 x 4 B/elem", [&] {
    const double v = bench::d2d_memcpy_gbs(bytes);
    c.s.results().param("d2d_memcpy_gbs", v);
    return v;
  });
  const double copy = prog.ceiling(
      copy_label, "2 x 4 B/elem",
      [&] {
        const double v = bench::copy_kernel_gbs(bytes);
        c.s.results().param("copy_kernel_gbs", v);
        return v;
      },
      false);
  std::printf(
      "ceilings: device-to-device cudaMemcpy %.0f GB/s, float4 copy kernel %.0f GB/s (bytes read + written; 0: not run)\n",
      d2d, copy);
  bench::fastest<tuned> fastest;
  prog.stage_loop<streaming::device_stage>([&](const streaming::device_stage &stage) {
    if (!c.s.selected(stage.info.id)) return;
    const auto cfg = sweep(c, stage);
    if (!cfg) return;
    const auto row = prog.tuned(
        stage.info.id, std::vector<streaming::launch_config>{*cfg},
        [&](const streaming::launch_config &k) { return c.stage(stage, k); },
        [&](const streaming::launch_config &k) {
          return std::to_string(k.threads) + " thr" +
                 (stage.unrolls ? " x" + std::to_string(k.unroll) : "");
        },
        c.bytes(c.n), [&](const streaming::launch_config &) { c.check(stage.info.id); });
    if (!row) return;
    c.tuned_stages.push_back({&stage, *cfg});
    fastest.offer(c.tuned_stages.back(), row->second.per_call.median);
  });
  if (fastest) c.fastest = *fastest;
  prog.finish();
}

// The fastest stage against cuBLAS, interleaved: aligned, then x offset by one float (a stage
// that refuses a pointer not 16-byte aligned gives way to the fastest one that takes it).
void vs_cublas_table(device_context &c) {
  if (!c.fastest.stage || !c.s.selected(blas_label)) return;
  bench::versus t(c.s, {"vs_cuBLAS",
                        "SAXPY against cuBLAS, interleaved (ratio = cuBLAS time / stage time, per "
                        "pair)",
                        "cuBLAS",
                        {{"case", 0}, {"stage", 0}, {"n", 0}}});
  for (std::size_t off : {std::size_t(0), std::size_t(1)}) {
    const std::string name = off ? "x offset by one float" : "aligned";
    tuned st = c.fastest;
    if (off && !c.s.quick(c.stage(*st.stage, st.cfg, off), c.bytes(c.n))) {
      bench::fastest<tuned> taking;
      for (const tuned &other : c.tuned_stages)
        if (const auto ms = c.s.quick(c.stage(*other.stage, other.cfg, off), c.bytes(c.n)))
          taking.offer(other, *ms);
      t.note(
          st.stage->info.id +
          " refuses x offset by one float (not 16-byte aligned): that row is the fastest stage that takes it");
      if (!taking) continue;
      st = *taking;
    }
    const std::string &id = st.stage->info.id;
    const auto cmp = t.pair(
        {name, id, double(c.n - off)}, c.library(off), c.stage(*st.stage, st.cfg, off),
        c.bytes(c.n - off), [&] { c.check(id + " " + name, off); }, id + " " + name,
        "cuBLAS " + name);
    t.headline_part(name + " " + id + " " + bench::range_text(cmp.ratio));
  }
  t.headline("SAXPY against cuBLAS (range over the interleaved pairs):", ";",
             "(" + std::to_string(c.n / mega) + "M floats)");
  t.finish();
}

// Lab (11.1): #pragma unroll on stage 01's loop against stage 02's templated unroll, each at its
// best of a few block sizes. The book, on GK104: 118 GiB/s with the pragma, 135 templated.
void lab_table(device_context &c) {
  if (!c.s.selected("lab_pragma_unroll")) return;
  const streaming::device_stage *templated = nullptr;
  for (const auto &stage : course::registered<streaming::device_stage>())
    if (!stage.info.todo && stage.info.id == "02_unrolled_templated") templated = &stage;
  table lab(
      "lab_pragma_unroll",
      "Lab (11.1): #pragma unroll against the templated unroll of stage 02, GB/s at the best of 32, 128, 512 threads",
      {{"unroll", 0},
       {"pragma_GB/s", 0},
       {"pragma_threads", 0},
       {"templated_GB/s", 0},
       {"templated_threads", 0},
       {"templated/pragma", 3}});
  const double bytes = double(c.bytes(c.n));
  for (int u : {1, 2, 4, 8, 16}) {
    // make(cfg): the call at a configuration, built once per block size, outside the timing.
    auto best_of = [&](auto make) {
      return c.s.best(
          std::vector<int>{32, 128, 512},
          [&](int t) {
            streaming::launch_config cfg;
            cfg.threads = t;
            cfg.unroll = u;
            return make(cfg);
          },
          c.bytes(c.n));
    };
    const auto p = best_of([&c](const streaming::launch_config &cfg) -> bench::work {
      return [&c, cfg](cudaStream_t st) {
        streaming::launch_saxpy_pragma_unroll(c.out.get(), c.x.get(), c.y.get(), c.n, alpha, cfg,
                                              st);
      };
    });
    std::vector<cell> row = {double(u), p ? cell(bytes / (p->second * 1e6)) : cell(),
                             p ? cell(double(p->first)) : cell()};
    // The lab kernel's output, once (every configuration writes the same).
    if (u == 4 && p) c.check("lab_pragma_unroll");
    if (templated) {
      const auto t =
          best_of([&](const streaming::launch_config &cfg) { return c.stage(*templated, cfg); });
      row.push_back(t ? cell(bytes / (t->second * 1e6)) : cell());
      row.push_back(t ? cell(double(t->first)) : cell());
      row.push_back(t && p ? cell(p->second / t->second) : cell());
    }
    lab.add_row(row);
  }
  c.s.finish(std::move(lab));
}

void device_part(bench::session &s, const options_t &opt) {
  if (!bench::any_selected<streaming::device_stage>(
          s, {"lab_pragma_unroll", blas_label, d2d_label, copy_label}))
    return;  // --only selects nothing here
  // x, y, out, cuBLAS's y; the ceilings' two.
  const std::size_t n =
      bench::fit_device(opt.n_device_m, 80, 6 * sizeof(float), "deviceN", "floats");
  s.results().param("device_n", double(n));
  std::printf(
      "\nPart 1: out = alpha*x + y on %zuM floats in device memory (%.2f GB moved per call)\n",
      n / mega, 3.0 * n * sizeof(float) / 1e9);
  device_context c(s, n);
  s.results().version("cuBLAS", bench::cublas_version());
  std::printf("cuBLAS %s\n", bench::cublas_version().c_str());
  device_progression_table(c);
  vs_cublas_table(c);
  lab_table(c);
}

// ---- part 2: through the host -----------------------------------------------------------------
// A stage's three host arrays, from its own allocator (allocated once per stage, outside the
// timing).
struct stage_arrays {
  streaming::stage_host_buffer x, y, out;
  stage_arrays(const streaming::host_stage &stage, std::size_t n)
      : x(stage, n), y(stage, n), out(stage, n) {
    course::fill_random_host(x.get(), n, 21);
    course::fill_random_host(y.get(), n, 22);
  }
};

// The harness's own pinned arrays, for the floor.
struct pinned_arrays {
  course::host_buffer<float> x, y, out;
  explicit pinned_arrays(std::size_t n)
      : x(n, course::host_memory::pinned),
        y(n, course::host_memory::pinned),
        out(n, course::host_memory::pinned) {}
};

// The floor for any stage: both inputs host->device while the output goes device->host, pinned.
double overlapped_transfer_ms(pinned_arrays &a, streaming::host_context &ctx, std::size_t n) {
  course::event go, down_done;
  cudaStream_t up = ctx.streams[0], down = ctx.streams[1];
  auto t = course::bench::time_device(
      [&](cudaStream_t st) {
        CUDA_CHECK(cudaEventRecord(go, st));
        CUDA_CHECK(cudaStreamWaitEvent(down, go, 0));
        CUDA_CHECK(cudaMemcpyAsync(a.out.get(), ctx.d_out, n * sizeof(float),
                                   cudaMemcpyDeviceToHost, down));
        CUDA_CHECK(cudaEventRecord(down_done, down));
        CUDA_CHECK(
            cudaMemcpyAsync(ctx.d_x, a.x.get(), n * sizeof(float), cudaMemcpyHostToDevice, st));
        CUDA_CHECK(
            cudaMemcpyAsync(ctx.d_y, a.y.get(), n * sizeof(float), cudaMemcpyHostToDevice, st));
        CUDA_CHECK(cudaStreamWaitEvent(st, down_done, 0));
      },
      up, 1, 5);
  return t.median_ms;
}

struct host_run {
  bench::session &s;
  std::size_t n;
  double bytes;  // across PCIe per call
  streaming::owned_host_context owned;
  streaming::host_context &ctx;
  std::string arrays_stage;  // one stage's arrays at a time (each set is 3 x n floats, pinned for
                             // most stages)
  std::unique_ptr<stage_arrays> arrays;
  double floor_ms = 0;

  host_run(bench::session &session, std::size_t n_, int max_streams)
      : s(session),
        n(n_),
        bytes(3.0 * n_ * sizeof(float)),
        owned(n_, max_streams),
        ctx(owned.get()) {}
  stage_arrays &arrays_of(const streaming::host_stage &stage) {
    if (!arrays || arrays_stage != stage.info.id) {
      arrays.reset();
      arrays = std::make_unique<stage_arrays>(stage, n);
      arrays_stage = stage.info.id;
    }
    return *arrays;
  }
  // A stage's wall time with `streams` streams, its output checked.
  bench::measurement run(const streaming::host_stage &stage, int streams, bool profiled) {
    stage_arrays &a = arrays_of(stage);
    ctx.n_streams = streams;
    ctx.phases = false;
    course::test::poison_host(a.out.get(), n);
    auto t = s.time_host(
        stage.info.id, [&] { stage.saxpy(a.out.get(), a.x.get(), a.y.get(), n, alpha, ctx); },
        profiled);
    verify(
        s, stage.info.id, n, [&](std::size_t i) { return a.x[i]; },
        [&](std::size_t i) { return a.y[i]; }, [&](std::size_t i) { return a.out[i]; });
    return t;
  }
};

// The host part's ceilings, which run (like any row) only when --only selects the floor's label.
void ceilings_host(host_run &h) {
  if (!h.s.selected(floor_label)) return;
  const auto pcie = bench::pinned_copy_rates(h.n * sizeof(float));
  {
    pinned_arrays floor_arrays(h.n);
    h.floor_ms = overlapped_transfer_ms(floor_arrays, h.ctx, h.n);
  }
  std::printf(
      "ceilings: pinned host->device %.1f GB/s, device->host %.1f GB/s, both at once %.1f GB/s; "
      "floor (x and y in while out goes out) %.2f ms\n",
      pcie.h2d_gbs, pcie.d2h_gbs, pcie.both_gbs, h.floor_ms);
  h.s.results().param("pinned_h2d_gbs", pcie.h2d_gbs);
  h.s.results().param("pinned_d2h_gbs", pcie.d2h_gbs);
  h.s.results().param("pinned_both_gbs", pcie.both_gbs);
  h.s.results().param("transfer_floor_ms", h.floor_ms);
}

// The streams table first: it decides how many streams the progression uses for stage 06.
std::map<std::string, int> streams_table(host_run &h, std::int64_t max_streams) {
  bench::timed_table t(
      h.s, "streams",
      "Streams (11.3): wall time by stream count, " + std::to_string(h.n / mega) + "M floats",
      {{"streams", 0}}, {{"GB/s", 2}, {"x_floor", 2}});
  std::map<std::string, int> best_streams;
  for (const auto &stage : course::registered<streaming::host_stage>()) {
    if (stage.info.todo || stage.info.id.find("streams") == std::string::npos ||
        !h.s.selected(stage.info.id))
      continue;
    bench::fastest<int> best;
    for (int k = 1; k <= max_streams; ++k) {
      const auto m = h.run(stage, k, false);
      t.add(stage.info.id + " with " + std::to_string(k) + " streams", {double(k)}, m,
            {bench::rate(h.bytes, m),
             h.floor_ms > 0 ? cell(m.per_call.median / h.floor_ms) : cell()});
      best.offer(k, m.per_call.median);
    }
    if (best) best_streams[stage.info.id] = *best;
  }
  t.get().set_plot({"lines", "streams", "time_ms"});
  t.finish();
  return best_streams;
}

void host_progression_table(host_run &h, std::map<std::string, int> best_streams) {
  std::vector<column> cols =
      bench::timed_columns({{"stage", 0}, {"memory", 0}, {"streams", 0}}, {{"H2D_ms", 2},
                                                                           {"kernel_ms", 2},
                                                                           {"D2H_ms", 2},
                                                                           {"GB/s", 2},
                                                                           {"x_floor", 2},
                                                                           {"speedup", 2}});
  cols[3].name = "wall_ms";  // the median wall time
  table prog("host_progression",
             "Through the host: wall time per stage (" + std::to_string(h.n / mega) + "M floats)",
             cols);
  double previous_ms = 0;
  for (const auto &stage : course::registered<streaming::host_stage>()) {
    if (!h.s.selected(stage.info.id)) continue;
    if (stage.info.todo) {
      prog.add_row({stage.info.id, std::string("TODO: not yet implemented")});
      continue;
    }
    const int k = best_streams.count(stage.info.id) ? best_streams[stage.info.id] : 1;
    const auto m = h.run(stage, k, true);
    const double ms = m.per_call.median;
    std::vector<cell> phases;  // of the last call
    for (auto [a, b] : {std::pair{h.ctx.ev_start, h.ctx.ev_h2d},
                        {h.ctx.ev_h2d, h.ctx.ev_kernel},
                        {h.ctx.ev_kernel, h.ctx.ev_d2h}})
      phases.push_back(h.ctx.phases ? cell(double(course::elapsed_ms(a, b))) : cell());
    for (cell x : {bench::rate(h.bytes, m), h.floor_ms > 0 ? cell(ms / h.floor_ms) : cell(),
                   previous_ms ? cell(previous_ms / ms) : cell()})
      phases.push_back(x);
    prog.add_row(bench::timed_row(
        {stage.info.id, std::string(course::to_string(stage.memory)), double(k)}, m, phases));
    bench::warn_if_noisy(prog, stage.info.id, m);
    previous_ms = ms;
  }
  if (h.floor_ms > 0) {
    std::vector<cell> floor = {floor_label, std::string("pinned"), cell(), h.floor_ms};
    floor.resize(cols.size());
    floor[cols.size() - 3] = h.bytes / (h.floor_ms * 1e6);
    floor[cols.size() - 2] = 1.0;
    prog.add_row(floor);
    plot_hint bars{"bars", "stage", "wall_ms"};
    bars.ceiling_from_row = floor_label;
    bars.ceiling_label = "transfer floor";
    bars.lower_is_better = true;
    prog.set_plot(bars);
  }
  h.s.finish(std::move(prog));
}

void host_part(bench::session &s, const options_t &opt) {
  if (!bench::any_selected<streaming::host_stage>(s, {floor_label}))
    return;  // --only selects nothing here: no pinned arrays, no copies
  const std::size_t n = std::size_t(opt.n_host_m) * mega;
  s.results().param("host_n", double(n));
  std::printf(
      "\nPart 2: out = alpha*x + y on %zuM floats in host memory (%.2f GB across PCIe per call)\n",
      n / mega, 3.0 * n * sizeof(float) / 1e9);
  // How many copy engines the GPU has: stage 06 overlaps the two directions only with one each.
  int device = 0, engines = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&engines, cudaDevAttrAsyncEngineCount, device));
  s.results().param("async_engine_count", double(engines));
  std::printf("copy engines (cudaDevAttrAsyncEngineCount): %d\n", engines);
  host_run h(s, n, int(opt.max_streams));
  ceilings_host(h);
  host_progression_table(h, streams_table(h, opt.max_streams));
}

}  // namespace

int main(int argc, char **argv) {
  options_t opt;
  return bench::bench_main(
      argc, argv,
      {"bench_streaming", "11-streaming", "Chapter 11: streaming workloads (SAXPY)",
       "Chapter 11: streaming SAXPY, every stage against its ceilings and cuBLAS."},
      [&](course::options &cli) {
        cli.add("N", opt.n_host_m, 1, 4096,
                "floats through the host, in units of 2^20 (the book's --N)")
            .add("deviceN", opt.n_device_m, 1, 8192, "floats in device memory, in units of 2^20")
            .add("maxStreams", opt.max_streams, 2, 64, "largest stream count of the streams table")
            .add("part", opt.part, "which part to run: device, host or all");
      },
      [&](bench::session &s) {
        if (opt.part != "host") device_part(s, opt);
        if (opt.part != "device") host_part(s, opt);
      },
      [&]() -> std::string {
        if (opt.part == "device" || opt.part == "host" || opt.part == "all") return "";
        return "--part: expected device, host or all, got '" + opt.part + "'";
      });
}
