// SPDX-License-Identifier: BSD-3-Clause
#include "harness/bench_session.h"

#include "common/timer.h"

#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace course {
namespace bench {

stop_rule settings::rule() const {
  stop_rule r;
  r.min_repeats = static_cast<int>(repeats);
  r.max_repeats = static_cast<int>(std::max(max_repeats, repeats));
  r.max_noise = max_noise_pct / 100.0;
  r.max_seconds = max_time_s;
  if (profile_only) {
    // Under ncu: three calls, no batches. A bench that picks a configuration by the times it
    // measured (stage 06's stream count) still picks; the figures are not the evidence.
    r.min_repeats = r.max_repeats = 3;
    r.max_noise = 0;
  }
  return r;
}

void add_common_options(options &cli, settings &s) {
  cli.add(
         "only", s.only,
         "run only the rows whose label matches this regular expression (ceilings and baselines too)")
      .add("repeats", s.repeats, 1, 100000,
           "timed calls per row, at least (more until the spread is under --max-noise)")
      .add("max-repeats", s.max_repeats, 1, 1000000, "timed calls per row, at most")
      .add(
          "max-noise", s.max_noise_pct, 0.0, 100.0,
          "stop repeating once the spread (relative std-dev, %) is under this; 0: exactly --repeats")
      .add("max-time", s.max_time_s, 0.0, 600.0,
           "seconds of repeats per row, at most (past --repeats)")
      .add("warmup", s.warmup, 0, 1000, "untimed calls before a row's timed ones")
      .flag("profile-only", s.profile_only,
            "under ncu: each row's warm-ups, its profiled call and three timed calls "
            "(no batches, no interleaved pairs)")
      .add("results", s.results, "directory for the CSV and JSON results");
}

session::session(std::string chapter, report &rep, const settings &opt)
    : chapter_(std::move(chapter)),
      rep_(rep),
      opt_(opt),
      device_(query_device()),
      floor_ms_(rep.event_floor_ms()) {
  if (!opt_.only.empty()) {
    try {
      only_ = std::regex(opt_.only, std::regex::ECMAScript);
    } catch (const std::regex_error &e) {
      throw std::runtime_error("--only: not a regular expression: '" + opt_.only + "' (" +
                               e.what() + ")");
    }
  }
  std::ostringstream t;
  t << "{\"min_repeats\": " << opt_.repeats << ", \"max_repeats\": " << opt_.rule().max_repeats
    << ", \"max_noise\": " << opt_.max_noise_pct / 100.0 << ", \"max_time_s\": " << opt_.max_time_s
    << ", \"warmup\": " << opt_.warmup << ", \"only\": " << json_string(opt_.only)
    << ", \"spread\": \"relative standard deviation (sample std-dev / mean) of the per-call times\""
    << ", \"noisy_above\": " << noisy_spread << ", \"event_floor_us\": " << floor_ms_ * 1e3
    << ", \"event_floor\": \"the median time of an event pair with nothing between, taken off every per-call time and every batch: the timer's own cost, which differs between hosts\""
    << ", \"l2_flush\": \"a write of 2 x L2 bytes before each per-call sample whose working set fits in L2\""
    << ", \"batch\": \"per call, median of 3 batches of k back-to-back calls between one event pair, no flush\""
    << ", \"interleaved\": \"baseline and best stage alternated, one event pair each; ratio = baseline / stage per pair\"}";
  rep_.timing(t.str());
}

bool session::selected(const std::string &label) const {
  return !only_ || std::regex_search(label, *only_);
}

void session::flush_l2(std::size_t working_set_bytes) {
  if (device_.l2_bytes <= 0 || working_set_bytes > std::size_t(device_.l2_bytes)) return;
  if (flush_.size() == 0) flush_ = device_buffer<unsigned char>(2 * std::size_t(device_.l2_bytes));
  // A write of twice the L2 evicts the working set; the value changes so no call is a no-op.
  CUDA_CHECK(cudaMemsetAsync(flush_.get(), ++flush_count_ & 0xff, flush_.size(), stream_));
}

double session::one_call_ms(const work &fn, std::size_t working_set_bytes) {
  flush_l2(working_set_bytes);
  CUDA_CHECK(cudaEventRecord(start_, stream_));
  fn(stream_);
  CUDA_CHECK(cudaEventRecord(stop_, stream_));
  return std::max(elapsed_ms(start_, stop_) - floor_ms_, 0.0);
}

double session::batch_ms(const work &fn, int k) {
  std::vector<double> per_call;
  for (int b = 0; b < 3; ++b) {
    CUDA_CHECK(cudaEventRecord(start_, stream_));
    for (int i = 0; i < k; ++i) fn(stream_);
    CUDA_CHECK(cudaEventRecord(stop_, stream_));
    per_call.push_back(std::max(elapsed_ms(start_, stop_) - floor_ms_, 0.0) / k);
  }
  return describe(per_call).median;
}

void session::profile_one(const std::string &label, const std::function<void()> &call) {
  // Exactly one call in the range, after the warm-ups and outside every event pair.
  const std::string range = "profile:" + chapter_ + ":" + label;
  nvtxRangePushA(range.c_str());
  call();
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  CUDA_CHECK(cudaDeviceSynchronize());  // host stages use streams of their own
  nvtxRangePop();
}

measurement session::time(const std::string &label, const work &fn, std::size_t working_set_bytes,
                          bool profiled) {
  for (int i = 0; i < opt_.warmup; ++i) fn(stream_);
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  if (profiled) profile_one(label, [&] { fn(stream_); });
  measurement m;
  m.flushed = device_.l2_bytes > 0 && working_set_bytes <= std::size_t(device_.l2_bytes);
  const stop_rule rule = opt_.rule();
  std::vector<double> ms;
  host_timer clock;
  while ((m.why = should_stop(ms, clock.elapsed_ms() / 1e3, rule)) == stop_reason::go_on)
    ms.push_back(one_call_ms(fn, working_set_bytes));
  m.per_call = describe(ms);
  if (opt_.profile_only) return m;
  m.batch_k = batch_calls(m.per_call.median);
  m.batch_ms = batch_ms(fn, m.batch_k);
  return m;
}

measurement session::time_host(const std::string &label, const std::function<void()> &fn,
                               bool profiled) {
  fn();
  if (profiled) profile_one(label, fn);
  stop_rule rule = opt_.rule();
  rule.min_repeats = std::min(rule.min_repeats, 5);
  measurement m;
  std::vector<double> ms;
  host_timer clock;
  while ((m.why = should_stop(ms, clock.elapsed_ms() / 1e3, rule)) == stop_reason::go_on) {
    host_timer t;
    fn();
    ms.push_back(t.elapsed_ms());
  }
  m.per_call = describe(ms);
  m.batch_ms = std::numeric_limits<double>::quiet_NaN();
  return m;
}

std::optional<double> session::quick(const work &fn, std::size_t working_set_bytes) {
  try {
    fn(stream_);
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    std::vector<double> ms;
    for (int i = 0; i < 5; ++i) ms.push_back(one_call_ms(fn, working_set_bytes));
    return describe(ms).median;
  } catch (
      const std::invalid_argument &) {  // a configuration the stage refuses (block size, registers)
    return std::nullopt;
  }
}

comparison session::interleaved(const work &baseline, const work &stage,
                                std::size_t working_set_bytes) {
  for (int i = 0; i < std::max<std::int64_t>(opt_.warmup, 1); ++i) {
    baseline(stream_);
    stage(stream_);
  }
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  comparison c;
  if (opt_.profile_only) return c;
  const stop_rule rule = opt_.rule();
  std::vector<double> a, b, ratios;
  host_timer clock;
  stop_reason why;
  while ((why = should_stop(ratios, clock.elapsed_ms() / 1e3, rule)) == stop_reason::go_on) {
    a.push_back(one_call_ms(baseline, working_set_bytes));
    b.push_back(one_call_ms(stage, working_set_bytes));
    ratios.push_back(b.back() > 0 ? a.back() / b.back() : 0);
  }
  const bool flushed = device_.l2_bytes > 0 && working_set_bytes <= std::size_t(device_.l2_bytes);
  c.baseline.per_call = describe(a);
  c.stage.per_call = describe(b);
  c.baseline.why = c.stage.why = why;
  c.baseline.flushed = c.stage.flushed = flushed;
  c.baseline.batch_ms = c.stage.batch_ms = std::numeric_limits<double>::quiet_NaN();
  c.ratio = pair_ratios(a, b);
  return c;
}

void session::fail(const std::string &what) {
  std::fprintf(stderr, "WRONG RESULT: %s\n", what.c_str());
  ++failures_;
}

void session::finish(table t) {
  if (t.rows().empty()) return;
  t.print();
  rep_.add(std::move(t));
}

std::vector<column> timing_columns() {
  return {{"time_ms", 4}, {"min_ms", 4},  {"max_ms", 4},
          {"repeats", 0}, {"spread%", 2}, {"batch_ms", 4}};
}

std::vector<cell> timing_cells(const measurement &m) {
  if (m.per_call.repeats == 0) return {cell(), cell(), cell(), cell(), cell(), cell()};
  const stats &s = m.per_call;
  return {s.median,          s.min,          s.max,
          double(s.repeats), 100 * s.spread, std::isfinite(m.batch_ms) ? cell(m.batch_ms) : cell()};
}

void warn_if_noisy(table &t, const std::string &label, const measurement &m) {
  if (!noisy(m.per_call)) return;
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "warning: %s: spread %.1f%% over %d repeats (min %.4f, max %.4f ms, stopped: %s)",
                label.c_str(), 100 * m.per_call.spread, m.per_call.repeats, m.per_call.min,
                m.per_call.max, to_string(m.why));
  t.note(buf);
}

cell rate(double amount, const measurement &m) {
  if (!(m.per_call.median > 0)) return cell();
  return amount / (m.per_call.median * 1e6);
}

namespace {
std::vector<column> progression_columns(const progression_spec &spec) {
  std::vector<column> cols = {{"stage", 0}, {spec.config_column, 0}};
  for (const auto &c : timing_columns()) cols.push_back(c);
  cols.push_back({spec.rate_column, 1});
  cols.push_back({spec.ceiling_column, 1});
  cols.push_back({"speedup", 2});
  cols.push_back({spec.library_column, 3});
  return cols;
}
}  // namespace

progression::progression(session &s, progression_spec spec)
    : s_(s), spec_(std::move(spec)), table_(spec_.name, spec_.title, progression_columns(spec_)) {
  if (!spec_.plot.kind.empty()) table_.set_plot(spec_.plot);
}

measurement progression::stage(const std::string &label, const std::string &config, const work &fn,
                               std::size_t working_set_bytes) {
  measurement m = s_.time(label, fn, working_set_bytes, true);
  row(label, config, m);
  return m;
}

void progression::row(const std::string &label, const std::string &config, const measurement &m,
                      bool chain) {
  std::vector<cell> r = {label, config};
  for (const auto &c : timing_cells(m)) r.push_back(c);
  const double ms = m.per_call.median;
  const cell rt = rate(spec_.amount, m);
  r.push_back(rt);
  r.push_back(ceiling_ > 0 && ms > 0 ? cell(100 * std::get<double>(rt) / ceiling_) : cell());
  r.push_back(chain && previous_ms_ > 0 && ms > 0 ? cell(previous_ms_ / ms) : cell());
  r.push_back(library_ms_ > 0 && ms > 0 ? cell(library_ms_ / ms) : cell());
  table_.add_row(std::move(r));
  warn_if_noisy(table_, label, m);
  if (chain && ms > 0) previous_ms_ = ms;
}

void progression::todo(const std::string &label) {
  table_.add_row({label, std::string("TODO: not yet implemented")});
}

void progression::library(const std::string &label, const measurement &m) {
  std::vector<cell> r = {label, std::string("library")};
  for (const auto &c : timing_cells(m)) r.push_back(c);
  const cell rt = rate(spec_.amount, m);
  r.push_back(rt);
  r.push_back(ceiling_ > 0 && m.per_call.median > 0 ? cell(100 * std::get<double>(rt) / ceiling_)
                                                    : cell());
  r.push_back(cell());
  r.push_back(library_ms_ > 0 && m.per_call.median > 0 ? cell(library_ms_ / m.per_call.median)
                                                       : cell());
  table_.add_row(std::move(r));
  warn_if_noisy(table_, label, m);
}

void progression::ceiling(const std::string &label, const std::string &config, double rate_value) {
  std::vector<cell> r = {label, config};
  for (std::size_t i = 0; i < timing_columns().size(); ++i) r.push_back(cell());
  r.push_back(rate_value);
  r.push_back(ceiling_ > 0 ? cell(100 * rate_value / ceiling_) : cell());
  r.push_back(cell());
  r.push_back(cell());
  table_.add_row(std::move(r));
}

void progression::finish() { s_.finish(std::move(table_)); }

int run(const std::string &program, const std::string &chapter, const std::string &title,
        const settings &opt, const std::function<void(session &)> &body) {
  return run(program, chapter, title, opt.results, [&](report &rep) {
    session s(chapter, rep, opt);
    body(s);
    return s.ok();
  });
}

int bench_main(int argc, char **argv, const program &p,
               const std::function<void(options &)> &declare,
               const std::function<void(session &)> &body,
               const std::function<std::string()> &check) {
  settings opt;
  options cli(p.name, p.summary);
  declare(cli);
  add_common_options(cli, opt);
  cli.parse(argc, argv);
  if (check) {
    const std::string error = check();
    if (!error.empty()) {
      std::fprintf(stderr, "%s: %s\n", p.name.c_str(), error.c_str());
      return 2;
    }
  }
  return run(p.name, p.chapter, p.title, opt, body);
}

}  // namespace bench
}  // namespace course
