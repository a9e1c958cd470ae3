// SPDX-License-Identifier: BSD-3-Clause
// The benchmark harness: event timing (warm-up, median of repeats), ceilings measured in the same
// run, and the progression table printed aligned on stdout and written as CSV + JSON under
// results/ for plots/plot.py. The measured rows of a migrated bench come from bench_session.h
// (adaptive repeats, L2 flush, interleaved baselines, --only, NVTX profile ranges); the plain
// time_device/time_host below stay for the benches not migrated yet.
#pragma once

#include "common/check.h"
#include "common/device.h"
#include "common/memory.h"
#include "common/timer.h"
#include "harness/bench_stats.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace course {
namespace bench {

struct timing {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  int repeats = 0;
};

timing summarize(std::vector<double> ms);

// Times fn(stream), device work enqueued on `stream`, between two events per repeat; the first
// `warmup` calls are not timed (module loading, first-touch, clocks ramping up).
template <class F>
timing time_device(F &&fn, cudaStream_t stream, int warmup = 3, int repeats = 20) {
  event start, stop;
  for (int i = 0; i < warmup; ++i) fn(stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> ms;
  for (int i = 0; i < repeats; ++i) {
    CUDA_CHECK(cudaEventRecord(start, stream));
    fn(stream);
    CUDA_CHECK(cudaEventRecord(stop, stream));
    ms.push_back(elapsed_ms(start, stop));
  }
  return summarize(std::move(ms));
}

// Wall-clock time of fn(), which must return with its work complete (host<->device streaming).
template <class F>
timing time_host(F &&fn, int warmup = 1, int repeats = 5) {
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> ms;
  for (int i = 0; i < repeats; ++i) {
    host_timer t;
    fn();
    ms.push_back(t.elapsed_ms());
  }
  return summarize(std::move(ms));
}

// --- ceilings, measured on this GPU in this run ---------------------------------------------
// Device-to-device cudaMemcpy of `bytes`, reported as (read + written) / time.
double d2d_memcpy_gbs(std::size_t bytes);
// A float4 grid-stride copy kernel over `bytes`, (read + written) / time.
double copy_kernel_gbs(std::size_t bytes);
// Reading `bytes` with a float4 sum kernel, read bytes / time.
double read_kernel_gbs(std::size_t bytes);
// Independent FMA chains in registers: FP32 TFLOP/s (2 flops per FMA).
double fma_tflops();
// Independent __dp4a chains in registers: IDP4A instructions per second, every lane counted.
double dp4a_per_s();
// Steps of one MUFU.RSQ and 11 FP32-pipe instructions (N-body stage 08's interaction), `chains`
// independent chains per thread (1, 2, 4 or 8: how many MUFU.RSQ a warp reaches together), in
// registers with no memory instruction: steps per second, every lane counted. The FFMAs read two
// registers and an immediate, or with three_registers three registers (as the interaction's do).
double rsqrt_mix_per_s(int chains, bool three_registers = false);

struct pcie_rates {
  double h2d_gbs = 0, d2h_gbs = 0,
         both_gbs = 0;  // both: bytes moved in the two directions at once / time
};
// Pinned-memory copies of `bytes` each way, on their own and overlapped in two streams.
pcie_rates pinned_copy_rates(std::size_t bytes);

// The SM clock sustained under load: every SM runs an FMA loop for about 15 ms and reads
// clock64() (SM cycles) and %globaltimer (ns) at its start and end; the median over blocks of
// cycles / ns. cudaDevAttrClockRate is the peak, not what the GPU holds under this load.
double sustained_sm_clock_mhz();
// The time an event pair reads with nothing between them, on a stream of its own: the median of
// 101 pairs, in ms. It is the timer's own cost, and it is a property of the host as much as of the
// GPU: 1.25 us on one H200 machine, 2.9 us on another with the same GPU, driver and VBIOS
// (2026-11-29). The session takes it off every per-call time (bench_session.h).
double event_pair_floor_ms();
// The CCCL (CUB/Thrust) version this harness was compiled against, "3.0.1" (from CUB_VERSION).
std::string cccl_version();

// --- tables and results --------------------------------------------------------------------
using cell = std::variant<std::monostate, double, std::string>;  // monostate prints as "-"

struct column {
  std::string name;
  int precision = 2;  // digits after the point for numbers
};

// A hint for plots/plot.py (its docstring says what each key does): a chart kind, the x and y
// columns, and the optional keys; json() writes the keys that are set, always in this order.
struct plot_hint {
  plot_hint() = default;
  plot_hint(std::string kind_, std::string x_, std::string y_)
      : kind(std::move(kind_)), x(std::move(x_)), y(std::move(y_)) {}
  std::string kind, x, y;                 // "bars", "lines" or "heatmap"; column names
  std::string value, series;              // heatmap: the value column; lines: one line per series
  bool columns_are_x = false;             // heatmap of a wide table: one column per x
  std::vector<std::string> skip_columns;  // the wide table's columns that are not an x
  std::string ceiling_from_row, ceiling_label;  // bars: the row whose y is drawn as a ceiling
  bool lower_is_better = false, logx = false, logy = false;
  std::string json() const;

  // A progression's chart: bars of y by stage, and the y of the row ceiling_row (a value of the
  // stage column) drawn across as a ceiling named `label`.
  static plot_hint stage_bars(std::string y, std::string ceiling_row = "", std::string label = "") {
    plot_hint h("bars", "stage", std::move(y));
    h.ceiling_from_row = std::move(ceiling_row);
    h.ceiling_label = std::move(label);
    return h;
  }
};

class table {
 public:
  table(std::string name, std::string title, std::vector<column> columns)
      : name_(std::move(name)), title_(std::move(title)), columns_(std::move(columns)) {}
  void add_row(std::vector<cell> row) { rows_.push_back(std::move(row)); }
  // A hint for plots/plot.py, kept in the JSON as "plot": {...}.
  void set_plot(const plot_hint &hint) { plot_ = hint.json(); }
  // A line printed under the table and kept in the JSON's "notes" (noise warnings, headlines).
  void note(std::string line) { notes_.push_back(std::move(line)); }
  const std::vector<std::string> &notes() const { return notes_; }
  void print(std::FILE *out = stdout) const;
  std::string csv() const;
  std::string json() const;
  const std::string &name() const { return name_; }
  const std::vector<std::vector<cell>> &rows() const { return rows_; }

 private:
  std::string name_, title_;
  std::vector<column> columns_;
  std::vector<std::vector<cell>> rows_;
  std::string plot_;
  std::vector<std::string> notes_;
};

// One benchmark run: the device, the parameters and the tables, written to
// <dir>/<bench>.json and <dir>/<bench>.<table>.csv.
class report {
 public:
  report(std::string bench, std::string title, device_info device);
  void param(const std::string &name, double value);
  void param(const std::string &name, const std::string &value);
  void add(table t) { tables_.push_back(std::move(t)); }
  // Library versions for the JSON's "versions" ("cuBLAS", "13.0.0"); CCCL is added by run().
  void version(const std::string &library, const std::string &value);
  // The SM clock measured under load (sustained_sm_clock_mhz), beside the peak attribute.
  void sustained_clock(double mhz) { sustained_mhz_ = mhz; }
  // The empty event pair's time (event_pair_floor_ms), printed in the preamble.
  void event_floor(double ms) { event_floor_ms_ = ms; }
  double event_floor_ms() const { return event_floor_ms_; }
  // The timing settings, as a JSON object text, for the JSON's "timing".
  void timing(std::string json_object) { timing_ = std::move(json_object); }
  // A line that says what a headline ratio measures, with its range; printed at the end of the
  // run and kept in the JSON's "headlines".
  void headline(std::string line) { headlines_.push_back(std::move(line)); }
  const std::vector<std::string> &headlines() const { return headlines_; }
  void write(const std::string &dir) const;  // prints where it wrote
  // The device preamble printed before the tables.
  void print_preamble(std::FILE *out = stdout) const;
  // The headlines, after the tables.
  void print_headlines(std::FILE *out = stdout) const;

 private:
  std::string bench_, title_, date_;
  device_info device_;
  std::vector<std::pair<std::string, std::string>> params_;  // value already JSON-encoded
  std::vector<std::pair<std::string, std::string>> versions_;
  std::vector<table> tables_;
  std::vector<std::string> headlines_;
  std::string timing_;
  double sustained_mhz_ = 0;
  double event_floor_ms_ = 0;
};

std::string json_string(const std::string &s);

// The common frame of every chapter's benchmark: skip (status 0) with the reason when there is no
// usable GPU; print the device preamble; run body(report), which returns false when a stage
// computed a wrong result; write the results; exit 1 on a wrong result or an exception, naming
// the program.
int run(const std::string &program, const std::string &bench, const std::string &title,
        const std::string &results_dir, const std::function<bool(report &)> &body);

}  // namespace bench
}  // namespace course
