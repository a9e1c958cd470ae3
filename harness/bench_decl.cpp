// SPDX-License-Identifier: BSD-3-Clause
#include "harness/bench_decl.h"

#include "common/device.h"

#include <cstdio>

namespace course {
namespace bench {

void goal_tally::add(bool met, const std::string &where) {
  ++total_;
  if (met) {
    ++met_;
    return;
  }
  missed_ += (missed_.empty() ? "" : ", ") + where;
}

std::string goal_tally::note(const std::string &missed_prefix) const {
  return "met at " + std::to_string(met_) + " of " + std::to_string(total_) + " sizes" +
         (missed_.empty() ? "" : "; missed at " + missed_prefix + missed_);
}

std::string goal_tally::brief() const {
  return "met at " + std::to_string(met_) + " of " + std::to_string(total_) +
         (missed_.empty() ? "" : " (missed at " + missed_ + ")");
}

std::vector<column> timed_columns(std::vector<column> lead, const std::vector<column> &trailing) {
  for (const column &c : timing_columns()) lead.push_back(c);
  for (const column &c : trailing) lead.push_back(c);
  return lead;
}

std::vector<cell> timed_row(std::vector<cell> lead, const measurement &m,
                            const std::vector<cell> &trailing) {
  for (const cell &c : timing_cells(m)) lead.push_back(c);
  for (const cell &c : trailing) lead.push_back(c);
  return lead;
}

std::vector<column> versus_columns(const versus_spec &spec) {
  std::vector<column> cols = spec.keys;
  const std::string unit = spec.microseconds ? "_us" : "_ms";
  const int digits = spec.microseconds ? 2 : 4, r = spec.ratio_precision;
  for (column c :
       {column{"stage" + unit, digits}, column{spec.library + unit, digits},
        column{"vs_" + spec.library, r}, column{"min", r}, column{"max", r}, column{"pairs", 0}})
    cols.push_back(c);
  for (const column &c : spec.extra) cols.push_back(c);
  if (spec.goal > 0) cols.push_back({"goal", 0});
  return cols;
}

bool versus_met(const versus_spec &spec, const comparison &cmp) {
  return cmp.ratio.median >= spec.goal;
}

std::vector<cell> versus_row(const versus_spec &spec, std::vector<cell> keys, const comparison &cmp,
                             const std::vector<cell> &extra) {
  const double scale = spec.microseconds ? 1e3 : 1;
  for (cell c : {cell(scale * cmp.stage.per_call.median),
                 cell(scale * cmp.baseline.per_call.median), cell(cmp.ratio.median),
                 cell(cmp.ratio.min), cell(cmp.ratio.max), cell(double(cmp.ratio.pairs))})
    keys.push_back(c);
  for (const cell &c : extra) keys.push_back(c);
  if (spec.goal > 0) keys.push_back(verdict(versus_met(spec, cmp)));
  return keys;
}

std::size_t fitted(std::size_t requested, std::size_t free_bytes, int percent,
                   std::size_t bytes_per_element, std::size_t unit) {
  const std::size_t fit = free_bytes / 100 * std::size_t(percent) / bytes_per_element;
  return requested > fit ? fit / unit * unit : requested;
}

std::size_t fit_device(std::int64_t requested_m, int percent, std::size_t bytes_per_element,
                       const std::string &flag, const std::string &what) {
  const std::size_t mega = std::size_t(1) << 20;
  std::size_t free_b = 0, total_b = 0;
  device_memory(free_b, total_b);
  const std::size_t want = std::size_t(requested_m) * mega,
                    n = fitted(want, free_b, percent, bytes_per_element, mega);
  if (n < want)
    std::printf("note: --%s %lldM does not fit in %.1f GiB free; using %zuM %s\n", flag.c_str(),
                (long long)requested_m, free_b / 1073741824.0, n / mega, what.c_str());
  return n;
}

table grid_table(const grid_spec &spec) {
  std::vector<column> cols = {{spec.row_axis, 0}};
  for (int c : spec.columns) cols.push_back({std::to_string(c), 0});
  cols.push_back({"max_" + spec.rate, 0});
  cols.push_back({"max_" + spec.column_axis, 0});
  table t(spec.name, spec.title, cols);
  plot_hint heatmap{"heatmap", spec.column_axis, spec.row_axis};
  heatmap.value = spec.rate;
  heatmap.columns_are_x = true;
  heatmap.skip_columns = {"max_" + spec.rate, "max_" + spec.column_axis};
  t.set_plot(heatmap);
  return t;
}

std::vector<cell> grid_row(const grid_spec &spec, int row,
                           const std::vector<std::optional<double>> &ms) {
  std::vector<cell> r = {double(row)};
  double best = 0, best_at = 0;
  for (std::size_t i = 0; i < spec.columns.size(); ++i) {
    if (i >= ms.size() || !ms[i] || !(*ms[i] > 0)) {
      r.push_back(cell());
      continue;
    }
    const double rate = spec.amount / (*ms[i] * 1e6);
    r.push_back(rate);
    if (rate > best) best = rate, best_at = spec.columns[i];
  }
  r.push_back(best);
  r.push_back(best_at);
  return r;
}

grid_result sweep_grid(session &s, const grid_spec &spec,
                       const std::function<work(int row, int column)> &make, std::size_t bytes) {
  grid_result out{grid_table(spec), std::nullopt};
  fastest<std::pair<int, int>> best;
  for (int r : spec.rows) {
    std::vector<std::optional<double>> ms;
    for (int c : spec.columns) {
      ms.push_back(s.quick(make(r, c), bytes));
      if (ms.back()) best.offer({r, c}, *ms.back());
    }
    out.t.add_row(grid_row(spec, r, ms));
  }
  out.best = best.best;
  return out;
}

timed_table::timed_table(session &s, std::string name, std::string title, std::vector<column> lead,
                         const std::vector<column> &trailing)
    : s_(s), table_(std::move(name), std::move(title), timed_columns(std::move(lead), trailing)) {}

void timed_table::add(const std::string &label, std::vector<cell> lead, const measurement &m,
                      const std::vector<cell> &trailing) {
  table_.add_row(timed_row(std::move(lead), m, trailing));
  warn_if_noisy(table_, label, m);
}

versus::versus(session &s, versus_spec spec)
    : s_(s), spec_(std::move(spec)), table_(spec_.name, spec_.title, versus_columns(spec_)) {}

comparison versus::pair(std::vector<cell> keys, const work &baseline, const work &stage,
                        std::size_t bytes, const std::function<void()> &check,
                        const std::string &who_stage, const std::string &who_baseline,
                        const extra_cells &extra, const std::string &where) {
  const comparison cmp = s_.interleaved(baseline, stage, bytes);
  if (check) check();
  table_.add_row(versus_row(spec_, std::move(keys), cmp, extra ? extra(cmp) : std::vector<cell>{}));
  if (!who_stage.empty()) warn_if_noisy(table_, who_stage, cmp.stage);
  if (!who_baseline.empty()) warn_if_noisy(table_, who_baseline, cmp.baseline);
  if (spec_.goal > 0 && !where.empty()) tally_.add(versus_met(spec_, cmp), where);
  return cmp;
}

void versus::headline(const std::string &prefix, const std::string &sep,
                      const std::string &suffix) {
  std::string line = prefix;
  for (std::size_t i = 0; i < parts_.size(); ++i) line += (i ? sep + " " : " ") + parts_[i];
  s_.results().headline(line + " " + suffix);
}

double declared_progression::ceiling(const std::string &label, const std::string &config,
                                     const std::function<double()> &measure, bool divides) {
  if (!s_.selected(label)) return 0;
  const double value = measure();
  if (divides) set_ceiling(value);
  ceilings_.push_back({label, {config, value}});
  return value;
}

std::optional<measurement> declared_progression::baseline(const std::string &label, const work &fn,
                                                          std::size_t bytes,
                                                          const std::function<void()> &check) {
  if (!s_.selected(label)) return std::nullopt;
  const measurement m = s_.time(label, fn, bytes, true);
  if (check) check();
  set_library(m);
  library_ = std::make_pair(label, m);
  return m;
}

void declared_progression::finish() {
  if (library_) library(library_->first, library_->second);
  for (const auto &c : ceilings_)
    if (c.second.second > 0) progression::ceiling(c.first, c.second.first, c.second.second);
  progression::finish();
}

}  // namespace bench
}  // namespace course
