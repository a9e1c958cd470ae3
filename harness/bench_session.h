// SPDX-License-Identifier: BSD-3-Clause
// The measuring frame of a migrated chapter bench, in the manner of nvbench: one `session` per
// run holds the common options, the stream, an L2 flush buffer, the failure count and the
// report; a bench's main registers the options (add_common_options), calls run(), and runs one
// function per table. A timed row carries median, min, max, repeats and spread of the per-call
// time, and the per-call time of a batch of back-to-back calls (timing_columns/timing_cells).
//
// How a row is timed (session::time):
//   warm-up calls (not timed); then, if the row is a profiled one, exactly one call inside the
//   NVTX range "profile:<chapter>:<label>" (outside every event pair, so `make profile` finds it);
//   then repeats of [L2 flush when the working set fits in L2] [event] call [event] until the
//   stopping rule of bench_stats.h says so (spread < --max-noise after --repeats samples, or
//   --max-repeats, or --max-time); then 3 batches of k back-to-back calls between one event pair
//   (no flush: launch overhead hidden, caches as the previous call left them), median / k.
//   Every per-call time and batch has the empty event pair's time taken off (event_pair_floor_ms
//   in bench.h, measured once per run): that is the timer's cost, not the call's, and it differs
//   between machines with the same GPU (1.25 against 2.9 us on two H200 hosts), which moved a
//   13 us call's ratio to NPP by 12%.
// The library baseline against the best stage (session::interleaved): A-B-A-B..., each call
// with its own event pair (and flush), the ratio baseline/stage of every pair; the stopping rule
// applies to the ratios. The ratio is reported as its median and its range over the pairs.
#pragma once

#include "common/cli.h"
#include "common/device.h"
#include "common/memory.h"
#include "harness/bench.h"
#include "harness/bench_stats.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace course {
namespace bench {

struct settings {
  std::int64_t repeats = 10;  // at least this many timed calls per row
  std::int64_t max_repeats = 1000;
  std::int64_t warmup = 3;
  double max_noise_pct = 1.0;  // stop when the spread is under this (0: exactly --repeats)
  double max_time_s = 1.0;     // per row
  std::string only;            // regex on row labels; empty: every row
  bool profile_only = false;   // ncu's run: warm-ups, the profiled call, 3 timed calls
  std::string results = "results";
  stop_rule rule() const;  // under --profile-only: exactly 3 calls
};

// Registers --only, --repeats, --max-repeats, --max-noise, --max-time, --warmup, --profile-only
// and --results.
void add_common_options(options &cli, settings &s);

struct measurement {
  stats per_call;       // one event pair per call (ms)
  double batch_ms = 0;  // per call, median of 3 batches of batch_k back-to-back calls
  int batch_k = 0;
  stop_reason why = stop_reason::go_on;
  bool flushed = false;  // the L2 was flushed before each per-call sample
};

// The interleaved comparison of a stage with its library baseline.
struct comparison {
  measurement stage, baseline;
  ratio_range ratio;  // baseline / stage per pair: > 1, the stage is faster
};

using work = std::function<void(cudaStream_t)>;

class session {
 public:
  session(std::string chapter, report &rep, const settings &opt);

  const settings &opt() const { return opt_; }
  report &results() { return rep_; }
  const device_info &device() const { return device_; }
  cudaStream_t stream() const { return stream_; }

  // --only: whether the row with this label runs (always, without --only).
  bool selected(const std::string &label) const;

  // A row's measurement (see the file comment). working_set_bytes decides the L2 flush;
  // profiled: the row belongs to the progression or is its library baseline (NVTX range).
  measurement time(const std::string &label, const work &fn, std::size_t working_set_bytes,
                   bool profiled = false);
  // Wall time of fn(), which returns with its work done (host<->device stages): warm-up 1, then
  // (a profiled row: one call in the NVTX range) the stopping rule with at least
  // min(--repeats, 5) samples. No flush, no batch.
  measurement time_host(const std::string &label, const std::function<void()> &fn,
                        bool profiled = false);
  // A quick look for picking a configuration: 1 warm-up, 5 calls, the median (ms); nullopt when
  // fn throws std::invalid_argument (a configuration the stage refuses).
  std::optional<double> quick(const work &fn, std::size_t working_set_bytes);
  // The candidate whose quick time is least, with that time; nullopt when every one is refused.
  template <class C, class Make>
  std::optional<std::pair<C, double>> best(const std::vector<C> &candidates, Make make,
                                           std::size_t working_set_bytes) {
    std::optional<std::pair<C, double>> b;
    for (const C &c : candidates) {
      const auto ms = quick(make(c), working_set_bytes);
      if (ms && (!b || *ms < b->second)) b = std::make_pair(c, *ms);
    }
    return b;
  }
  // A-B-A-B... of baseline and stage (see the file comment).
  comparison interleaved(const work &baseline, const work &stage, std::size_t working_set_bytes);

  // Failure accounting: a wrong result is printed and counted, the run goes on, the program
  // exits 1 at the end.
  void fail(const std::string &what);
  template <class T>
  bool expect(const std::string &who, std::size_t n, T got, T want) {
    if (got == want) return true;
    fail(who + ", n=" + std::to_string(n) + ": expected " + std::to_string(want) + ", got " +
         std::to_string(got));
    return false;
  }
  bool ok() const { return failures_ == 0; }

  // Prints the table and adds it to the report, when it has rows (--only can leave one empty).
  void finish(table t);

 private:
  void flush_l2(std::size_t working_set_bytes);
  double one_call_ms(const work &fn, std::size_t working_set_bytes);
  double batch_ms(const work &fn, int k);
  void profile_one(const std::string &label, const std::function<void()> &call);

  std::string chapter_;
  report &rep_;
  settings opt_;
  device_info device_;
  double floor_ms_ = 0;  // the empty event pair's time (report::event_floor_ms)
  std::optional<std::regex> only_;
  course::stream stream_;
  course::event start_, stop_;
  device_buffer<unsigned char> flush_;
  int flush_count_ = 0;
  int failures_ = 0;
};

// --- the columns every timed row carries ------------------------------------------------------
// time_ms (median), min_ms, max_ms, repeats, spread% (relative std-dev), batch_ms (per call in a
// batch of back-to-back calls).
std::vector<column> timing_columns();
std::vector<cell> timing_cells(const measurement &m);
// A row whose spread exceeds 5% gets a note under its table.
void warn_if_noisy(table &t, const std::string &label, const measurement &m);
// The rate of a row: amount / (median ms * 1e6), e.g. bytes -> GB/s; "-" when not timed.
cell rate(double amount, const measurement &m);

// --- the progression table: stage rows, the library row, ceiling rows --------------------------
// stage | <config> | timing columns | <rate> | %<ceiling> | speedup | vs_<library>
struct progression_spec {
  std::string name, title;
  std::string config_column = "config";
  std::string rate_column = "GB/s";
  double amount = 0;  // what one call moves, in the rate's unit x 1e6 per ms (bytes for GB/s)
  std::string ceiling_column;  // "%d2d_copy"
  std::string library_column;  // "vs_cuBLAS"
  plot_hint plot;              // the plot hint (none while its kind is empty)
};

class progression {
 public:
  progression(session &s, progression_spec spec);
  // The ceiling the % column divides by, and the library time vs_<library> divides.
  void set_ceiling(double rate_value) { ceiling_ = rate_value; }
  void set_library(const measurement &m) { library_ms_ = m.per_call.median; }
  // Times a stage (a profiled row) and adds it; speed-up is over the previous stage row.
  measurement stage(const std::string &label, const std::string &config, const work &fn,
                    std::size_t working_set_bytes);
  // Adds an already timed row (a variant of the previous stage, not in the speed-up chain).
  void row(const std::string &label, const std::string &config, const measurement &m,
           bool chain = true);
  void todo(const std::string &label);
  void library(const std::string &label, const measurement &m);
  void ceiling(const std::string &label, const std::string &config, double rate_value);
  // Prints and reports it (session::finish).
  void finish();

 private:
  session &s_;
  progression_spec spec_;
  table table_;
  double ceiling_ = 0, library_ms_ = 0, previous_ms_ = 0;
};

// The frame of a migrated bench: skip (status 0) with the reason when there is no usable GPU;
// print the device preamble (clocks, versions); run body(session); print the headlines; write
// the results; exit 1 on a wrong result or an exception, naming the program.
int run(const std::string &program, const std::string &chapter, const std::string &title,
        const settings &opt, const std::function<void(session &)> &body);

// What a chapter bench's main is made of: its names, its own options (declared before the common
// ones, so --help lists them first), a check of their values ("" when fine, else the one-line
// error, printed after the program's name: status 2, before any GPU is looked for) and its body.
struct program {
  std::string name;     // "bench_reduction": --help, errors, results/<name>.json
  std::string chapter;  // "12-reduction": profile ranges
  std::string title;    // the report's title
  std::string summary;  // --help's first line
};
int bench_main(int argc, char **argv, const program &p,
               const std::function<void(options &)> &declare,
               const std::function<void(session &)> &body,
               const std::function<std::string()> &check = {});

}  // namespace bench
}  // namespace course
