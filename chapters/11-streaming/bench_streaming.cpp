// SPDX-License-Identifier: BSD-3-Clause
// Chapter 11 benchmark: every stage of the chapter, its ceilings and cuBLAS, in one run.
//
// Part 1, device memory (--deviceN Mfloats, default 256M): each device stage swept over block
// size x unroll (listing 11.3's table), then the progression table at each stage's best
// configuration, against the device-to-device copy ceiling and cublasSaxpy measured here; then a
// lab (11.1): stage 01's loop under #pragma unroll against stage 02's templated unroll.
// Part 2, through the host (--N Mfloats, default 128M as in the book): every host stage's wall
// time, split into phases where the stage allows it, the streams table (11.3), and the floor:
// both inputs copied in while the output is copied out, on pinned memory.
// Every stage's output is checked; a wrong result ends the program with status 1.
#include "host_context.h"
#include "streaming.h"

#include "common/cli.h"
#include "common/device.h"
#include "common/random.h"
#include "common/random_fill.h"
#include "harness/bench.h"
#include "harness/test_support.h"

#include <cublas_v2.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

using course::bench::cell;
using course::bench::column;
using course::bench::table;

namespace {

constexpr std::size_t mega = std::size_t(1) << 20;
constexpr float alpha = 2.5f;

#define CUBLAS_CHECK(call)                                                                                   \
  do {                                                                                                       \
    cublasStatus_t s_ = (call);                                                                              \
    if (s_ != CUBLAS_STATUS_SUCCESS)                                                                         \
      throw std::runtime_error(std::string(__FILE__) + ":" + std::to_string(__LINE__) + ": " #call " failed: " + \
                               cublasGetStatusString(s_));                                                   \
  } while (0)

struct options_t {
  std::int64_t n_host_m = 128, n_device_m = 256, max_streams = 8, repeats = 20;
  std::string part = "all", results = "results";
};

// Checks every element of out against alpha*x + y (float64, same bound as the tests).
template <class X, class Y, class Out>
bool verify(const std::string &who, std::size_t n, X x, Y y, Out out) {
  auto r = course::test::check_elements(
      n, out, [&](std::size_t i) { return alpha * double(x(i)) + double(y(i)); },
      [&](std::size_t i, float g, double want) {
        return course::test::close(g, want, std::fabs(alpha * double(x(i))) + std::fabs(double(y(i))), 2 * FLT_EPSILON);
      });
  if (!r.ok()) std::fprintf(stderr, "WRONG RESULT: %s\n", course::test::describe(who, "benchmark", n, r).c_str());
  return r.ok();
}

struct best_config {
  streaming::launch_config cfg;
  double ms = 0;
};

// ---- part 1: device memory --------------------------------------------------------------------
bool device_part(course::bench::report &rep, const options_t &opt) {
  std::size_t free_b = 0, total_b = 0;
  course::device_memory(free_b, total_b);
  std::size_t n = std::size_t(opt.n_device_m) * mega;
  const std::size_t fit = free_b / 100 * 80 / (3 * sizeof(float));
  if (n > fit) {
    std::printf("note: --deviceN %lldM does not fit in %.1f GiB free; using %zuM floats\n", (long long)opt.n_device_m,
                free_b / 1073741824.0, fit / mega);
    n = fit / mega * mega;
  }
  rep.param("device_n", double(n));
  const std::size_t bytes = 3 * n * sizeof(float);  // x and y read, out written
  std::printf("\nPart 1: out = alpha*x + y on %zuM floats in device memory (%.2f GB moved per call)\n", n / mega, bytes / 1e9);

  const std::uint64_t seed = 11;
  course::device_buffer<float> x(n), y(n), out(n), y_blas(n);
  course::fill_random_device(x.get(), n, seed);
  course::fill_random_device(y.get(), n, seed + 1);
  course::stream s;
  auto gbs = [&](double ms) { return bytes / (ms * 1e6); };

  const double d2d = course::bench::d2d_memcpy_gbs(n * sizeof(float));
  const double copy = course::bench::copy_kernel_gbs(n * sizeof(float));
  std::printf("ceilings: device-to-device cudaMemcpy %.0f GB/s, float4 copy kernel %.0f GB/s (bytes read + written)\n", d2d, copy);

  cublasHandle_t handle;
  CUBLAS_CHECK(cublasCreate(&handle));
  CUBLAS_CHECK(cublasSetStream(handle, s));
  // cublasSaxpy is in place (y = alpha*x + y); timing it over and over on one y is the same traffic.
  CUDA_CHECK(cudaMemcpy(y_blas.get(), y.get(), n * sizeof(float), cudaMemcpyDeviceToDevice));
  auto blas = course::bench::time_device([&](cudaStream_t) {
    CUBLAS_CHECK(cublasSaxpy_64(handle, std::int64_t(n), &alpha, x.get(), 1, y_blas.get(), 1));
  }, s, 3, int(opt.repeats));
  CUBLAS_CHECK(cublasDestroy(handle));
  const double blas_gbs = gbs(blas.median_ms);

  const std::vector<int> threads_axis = {32, 64, 128, 256, 512, 1024};
  table prog("device_progression", "Device SAXPY progression (" + std::to_string(n / mega) + "M floats, 12 B/element)",
             {{"stage", 0}, {"config", 0}, {"time_ms", 3}, {"GB/s", 0}, {"%d2d_copy", 1}, {"speedup", 2}, {"vs_cuBLAS", 3}});
  bool ok = true;
  double previous_ms = 0;
  for (const auto &stage : course::registered<streaming::device_stage>()) {
    if (stage.info.todo) {
      prog.add_row({stage.info.id, std::string("TODO: not yet implemented"), {}, {}, {}, {}, {}});
      continue;
    }
    // Sweep block size x unroll with fewer repeats, then time the best configuration properly.
    std::vector<int> unrolls;
    for (int u = 1; u <= (stage.unrolls ? 16 : 1); ++u) unrolls.push_back(u);
    std::vector<column> cols = {{"unroll", 0}};
    for (int t : threads_axis) cols.push_back({std::to_string(t), 0});
    cols.push_back({"max_GB/s", 0});
    cols.push_back({"max_threads", 0});
    table sweep("sweep_" + stage.info.id, "Stage " + stage.info.id + ": GB/s by unroll (rows) and threads per block (columns)", cols);
    best_config best;
    for (int u : unrolls) {
      std::vector<cell> row = {double(u)};
      double row_best = 0;
      int row_best_threads = 0;
      for (int t : threads_axis) {
        streaming::launch_config cfg;
        cfg.threads = t;
        cfg.unroll = u;
        course::bench::timing tm;
        try {
          tm = course::bench::time_device([&](cudaStream_t st) { stage.saxpy(out.get(), x.get(), y.get(), n, alpha, cfg, st); }, s, 1, 7);
        } catch (const std::invalid_argument &) {  // too many registers for this block size
          row.push_back(cell());
          continue;
        }
        row.push_back(gbs(tm.median_ms));
        if (gbs(tm.median_ms) > row_best) row_best = gbs(tm.median_ms), row_best_threads = t;
        if (best.ms == 0 || tm.median_ms < best.ms) best = {cfg, tm.median_ms};
      }
      row.push_back(row_best);
      row.push_back(double(row_best_threads));
      sweep.add_row(row);
    }
    sweep.set_plot(R"({"kind": "heatmap", "x": "threads", "y": "unroll", "value": "GB/s", "columns_are_x": true, "skip_columns": ["max_GB/s", "max_threads"]})");
    if (stage.unrolls) sweep.print();
    else {
      std::printf("\nStage %s (no unroll): best block size %d threads\n", stage.info.id.c_str(), best.cfg.threads);
    }
    rep.add(sweep);

    auto tm = course::bench::time_device([&](cudaStream_t st) { stage.saxpy(out.get(), x.get(), y.get(), n, alpha, best.cfg, st); }, s, 3, int(opt.repeats));
    CUDA_CHECK(cudaStreamSynchronize(s));
    std::vector<float> h_out(n);
    CUDA_CHECK(cudaMemcpy(h_out.data(), out.get(), n * sizeof(float), cudaMemcpyDeviceToHost));
    ok &= verify(stage.info.id, n, [&](std::size_t i) { return course::random_float(seed, i); },
                 [&](std::size_t i) { return course::random_float(seed + 1, i); }, [&](std::size_t i) { return h_out[i]; });
    std::string config = std::to_string(best.cfg.threads) + " thr" + (stage.unrolls ? " x" + std::to_string(best.cfg.unroll) : "");
    prog.add_row({stage.info.id, config, tm.median_ms, gbs(tm.median_ms), 100 * gbs(tm.median_ms) / d2d,
                  previous_ms ? cell(previous_ms / tm.median_ms) : cell(), blas.median_ms / tm.median_ms});
    previous_ms = tm.median_ms;
  }
  prog.add_row({std::string("cuBLAS cublasSaxpy"), std::string("library"), blas.median_ms, blas_gbs, 100 * blas_gbs / d2d, {}, 1.0});
  prog.add_row({std::string("ceiling: D2D cudaMemcpy"), std::string("2 x 4 B/elem"), {}, d2d, 100.0, {}, {}});
  prog.add_row({std::string("ceiling: float4 copy kernel"), std::string("2 x 4 B/elem"), {}, copy, 100 * copy / d2d, {}, {}});
  prog.set_plot(R"({"kind": "bars", "x": "stage", "y": "GB/s", "ceiling_from_row": "ceiling: D2D cudaMemcpy", "ceiling_label": "device-to-device memcpy"})");
  prog.print();
  rep.add(prog);

  // Lab (11.1): #pragma unroll on stage 01's loop against stage 02's templated unroll, each at its
  // best of a few block sizes. The book, on GK104: 118 GiB/s with the pragma, 135 templated.
  const streaming::device_stage *templated = nullptr;
  for (const auto &stage : course::registered<streaming::device_stage>())
    if (!stage.info.todo && stage.info.id == "02_unrolled_templated") templated = &stage;
  table lab("lab_pragma_unroll", "Lab (11.1): #pragma unroll against the templated unroll of stage 02, GB/s at the best of 32, 128, 512 threads",
            {{"unroll", 0}, {"pragma_GB/s", 0}, {"pragma_threads", 0}, {"templated_GB/s", 0}, {"templated_threads", 0}, {"templated/pragma", 3}});
  for (int u : {1, 2, 4, 8, 16}) {
    auto best_of = [&](auto &&run) {
      best_config b;
      for (int t : {32, 128, 512}) {
        streaming::launch_config cfg;
        cfg.threads = t;
        cfg.unroll = u;
        try {
          auto tm = course::bench::time_device([&](cudaStream_t st) { run(cfg, st); }, s, 1, 7);
          if (b.ms == 0 || tm.median_ms < b.ms) b = {cfg, tm.median_ms};
        } catch (const std::invalid_argument &) {  // too many registers for this block size
        }
      }
      return b;
    };
    const best_config p = best_of([&](const streaming::launch_config &cfg, cudaStream_t st) {
      streaming::launch_saxpy_pragma_unroll(out.get(), x.get(), y.get(), n, alpha, cfg, st);
    });
    std::vector<cell> row = {double(u), p.ms ? cell(gbs(p.ms)) : cell(), p.ms ? cell(double(p.cfg.threads)) : cell()};
    if (u == 4 && p.ms) {  // check the lab kernel's output once
      CUDA_CHECK(cudaStreamSynchronize(s));
      std::vector<float> h_out(n);
      CUDA_CHECK(cudaMemcpy(h_out.data(), out.get(), n * sizeof(float), cudaMemcpyDeviceToHost));
      ok &= verify("lab_pragma_unroll", n, [&](std::size_t i) { return course::random_float(seed, i); },
                   [&](std::size_t i) { return course::random_float(seed + 1, i); }, [&](std::size_t i) { return h_out[i]; });
    }
    if (templated) {
      const best_config t = best_of([&](const streaming::launch_config &cfg, cudaStream_t st) {
        templated->saxpy(out.get(), x.get(), y.get(), n, alpha, cfg, st);
      });
      row.push_back(t.ms ? cell(gbs(t.ms)) : cell());
      row.push_back(t.ms ? cell(double(t.cfg.threads)) : cell());
      row.push_back(t.ms && p.ms ? cell(p.ms / t.ms) : cell());
    }
    lab.add_row(row);
  }
  lab.print();
  rep.add(lab);
  rep.param("d2d_memcpy_gbs", d2d);
  rep.param("copy_kernel_gbs", copy);
  rep.param("cublas_saxpy_gbs", blas_gbs);
  return ok;
}

// ---- part 2: through the host -----------------------------------------------------------------
// A stage's three host arrays, from its own allocator (allocated once per stage, outside the timing).
struct stage_arrays {
  streaming::stage_host_buffer x, y, out;
  stage_arrays(const streaming::host_stage &stage, std::size_t n) : x(stage, n), y(stage, n), out(stage, n) {
    course::fill_random_host(x.get(), n, 21);
    course::fill_random_host(y.get(), n, 22);
  }
};

// The harness's own pinned arrays, for the floor.
struct pinned_arrays {
  course::host_buffer<float> x, y, out;
  explicit pinned_arrays(std::size_t n)
      : x(n, course::host_memory::pinned), y(n, course::host_memory::pinned), out(n, course::host_memory::pinned) {}
};

// The floor for any stage: both inputs host->device while the output goes device->host, pinned.
double overlapped_transfer_ms(pinned_arrays &a, streaming::host_context &ctx, std::size_t n) {
  course::event go, down_done;
  cudaStream_t up = ctx.streams[0], down = ctx.streams[1];
  auto t = course::bench::time_device([&](cudaStream_t st) {
    CUDA_CHECK(cudaEventRecord(go, st));
    CUDA_CHECK(cudaStreamWaitEvent(down, go, 0));
    CUDA_CHECK(cudaMemcpyAsync(a.out.get(), ctx.d_out, n * sizeof(float), cudaMemcpyDeviceToHost, down));
    CUDA_CHECK(cudaEventRecord(down_done, down));
    CUDA_CHECK(cudaMemcpyAsync(ctx.d_x, a.x.get(), n * sizeof(float), cudaMemcpyHostToDevice, st));
    CUDA_CHECK(cudaMemcpyAsync(ctx.d_y, a.y.get(), n * sizeof(float), cudaMemcpyHostToDevice, st));
    CUDA_CHECK(cudaStreamWaitEvent(st, down_done, 0));
  }, up, 1, 5);
  return t.median_ms;
}

bool host_part(course::bench::report &rep, const options_t &opt) {
  const std::size_t n = std::size_t(opt.n_host_m) * mega;
  const double bytes = 3.0 * n * sizeof(float);
  rep.param("host_n", double(n));
  std::printf("\nPart 2: out = alpha*x + y on %zuM floats in host memory (%.2f GB across PCIe per call)\n", n / mega, bytes / 1e9);
  streaming::owned_host_context owned(n, int(opt.max_streams));
  auto &ctx = owned.get();

  // One stage's arrays at a time (each set is 3 x n floats, pinned for most stages).
  std::string arrays_stage;
  std::unique_ptr<stage_arrays> arrays;
  auto arrays_of = [&](const streaming::host_stage &stage) -> stage_arrays & {
    if (!arrays || arrays_stage != stage.info.id) {
      arrays.reset();
      arrays = std::make_unique<stage_arrays>(stage, n);
      arrays_stage = stage.info.id;
    }
    return *arrays;
  };

  const auto pcie = course::bench::pinned_copy_rates(n * sizeof(float));
  double floor_ms = 0;
  {
    pinned_arrays floor_arrays(n);
    floor_ms = overlapped_transfer_ms(floor_arrays, ctx, n);
  }
  std::printf("ceilings: pinned host->device %.1f GB/s, device->host %.1f GB/s, both at once %.1f GB/s; "
              "floor (x and y in while out goes out) %.2f ms\n", pcie.h2d_gbs, pcie.d2h_gbs, pcie.both_gbs, floor_ms);
  rep.param("pinned_h2d_gbs", pcie.h2d_gbs);
  rep.param("pinned_d2h_gbs", pcie.d2h_gbs);
  rep.param("pinned_both_gbs", pcie.both_gbs);
  rep.param("transfer_floor_ms", floor_ms);

  bool ok = true;
  auto run = [&](const streaming::host_stage &stage, int streams) {
    stage_arrays &a = arrays_of(stage);
    ctx.n_streams = streams;
    ctx.phases = false;
    course::test::poison_host(a.out.get(), n);
    auto t = course::bench::time_host([&] { stage.saxpy(a.out.get(), a.x.get(), a.y.get(), n, alpha, ctx); }, 1, 5);
    ok &= verify(stage.info.id, n, [&](std::size_t i) { return a.x[i]; }, [&](std::size_t i) { return a.y[i]; },
                 [&](std::size_t i) { return a.out[i]; });
    return t;
  };

  // The streams table first: it decides how many streams the progression uses for stage 06.
  table streams_table("streams", "Streams (11.3): wall time by stream count, " + std::to_string(n / mega) + "M floats",
                      {{"streams", 0}, {"time_ms", 2}, {"GB/s", 2}, {"x_floor", 2}});
  std::map<std::string, int> best_streams;
  for (const auto &stage : course::registered<streaming::host_stage>()) {
    if (stage.info.todo || stage.info.id.find("streams") == std::string::npos) continue;
    double best_ms = 0;
    for (int k = 1; k <= opt.max_streams; ++k) {
      auto t = run(stage, k);
      streams_table.add_row({double(k), t.median_ms, bytes / (t.median_ms * 1e6), t.median_ms / floor_ms});
      if (best_ms == 0 || t.median_ms < best_ms) best_ms = t.median_ms, best_streams[stage.info.id] = k;
    }
    streams_table.set_plot(R"({"kind": "lines", "x": "streams", "y": "time_ms"})");
    streams_table.print();
    rep.add(streams_table);
  }

  table prog("host_progression", "Through the host: wall time per stage (" + std::to_string(n / mega) + "M floats)",
             {{"stage", 0}, {"memory", 0}, {"streams", 0}, {"wall_ms", 2}, {"H2D_ms", 2}, {"kernel_ms", 2}, {"D2H_ms", 2},
              {"GB/s", 2}, {"x_floor", 2}, {"speedup", 2}});
  double previous_ms = 0;
  for (const auto &stage : course::registered<streaming::host_stage>()) {
    if (stage.info.todo) {
      prog.add_row({stage.info.id, std::string("TODO: not yet implemented")});
      continue;
    }
    int k = best_streams.count(stage.info.id) ? best_streams[stage.info.id] : 1;
    auto t = run(stage, k);
    cell h2d, kernel, d2h;
    if (ctx.phases) {
      h2d = double(course::elapsed_ms(ctx.ev_start, ctx.ev_h2d));
      kernel = double(course::elapsed_ms(ctx.ev_h2d, ctx.ev_kernel));
      d2h = double(course::elapsed_ms(ctx.ev_kernel, ctx.ev_d2h));
    }
    prog.add_row({stage.info.id, std::string(course::to_string(stage.memory)), double(k), t.median_ms, h2d, kernel, d2h,
                  bytes / (t.median_ms * 1e6), t.median_ms / floor_ms, previous_ms ? cell(previous_ms / t.median_ms) : cell()});
    previous_ms = t.median_ms;
  }
  prog.add_row({std::string("floor: overlapped pinned copies"), std::string("pinned"), {}, floor_ms, {}, {}, {}, bytes / (floor_ms * 1e6), 1.0, {}});
  prog.set_plot(R"({"kind": "bars", "x": "stage", "y": "wall_ms", "ceiling_from_row": "floor: overlapped pinned copies", "ceiling_label": "transfer floor", "lower_is_better": true})");
  prog.print();
  rep.add(prog);
  return ok;
}

}  // namespace

int main(int argc, char **argv) {
  options_t opt;
  course::options cli("bench_streaming", "Chapter 11: streaming SAXPY, every stage against its ceilings and cuBLAS.");
  cli.add("N", opt.n_host_m, 1, 4096, "floats through the host, in units of 2^20 (the book's --N)")
      .add("deviceN", opt.n_device_m, 1, 8192, "floats in device memory, in units of 2^20")
      .add("maxStreams", opt.max_streams, 2, 64, "largest stream count of the streams table")
      .add("repeats", opt.repeats, 3, 1000, "timed repeats per measurement (the median is reported)")
      .add("part", opt.part, "which part to run: device, host or all")
      .add("results", opt.results, "directory for the CSV and JSON results");
  cli.parse(argc, argv);
  if (opt.part != "device" && opt.part != "host" && opt.part != "all") {
    std::fprintf(stderr, "bench_streaming: --part: expected device, host or all, got '%s'\n", opt.part.c_str());
    return 2;
  }
  return course::bench::run("bench_streaming", "11-streaming", "Chapter 11: streaming workloads (SAXPY)", opt.results,
                            [&](course::bench::report &rep) {
                              bool ok = true;
                              if (opt.part != "host") ok &= device_part(rep, opt);
                              if (opt.part != "device") ok &= host_part(rep, opt);
                              return ok;
                            });
}
