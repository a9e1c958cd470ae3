// SPDX-License-Identifier: BSD-3-Clause
// What a chapter bench declares, in the manner of CUB's nvbench benchmarks: its stages (with
// their launch and the configurations to try), its library baselines, its ceilings and its
// tables. The loops, the timing, the choice of a configuration, the verification hooks, the
// rows, the goals and the headlines are written here once; bench_session.h measures, bench.h
// prints and writes the JSON.
//
//   progression  the stage rows (stage_loop, tuned), the library row (baseline) and the ceiling
//                rows (ceiling), in that order whatever the order of the declarations;
//   versus       a stage and its library interleaved, one row per case: keys, the two times, the
//                ratio with its range over the pairs, and a goal on the ratio;
//   timed_table  rows of a label (and keys), the timing columns and columns of the bench's own;
//   fastest      the best of what was offered; goal_tally: a goal met or missed over many sizes.
// The pieces that need no GPU (column lists, rows, tallies) are tested on the host by
// harness/tests/test_common.cpp.
#pragma once

#include "common/stage.h"
#include "harness/bench.h"
#include "harness/bench_session.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace course {
namespace bench {

// --- pieces without a GPU ---------------------------------------------------------------------

// The fastest of the candidates offered: the first one, then any strictly faster.
template <class T>
struct fastest {
  std::optional<T> best;
  double ms = 0;
  bool offer(const T &candidate, double time_ms) {
    if (best && !(time_ms < ms)) return false;
    best = candidate;
    ms = time_ms;
    return true;
  }
  explicit operator bool() const { return best.has_value(); }
  const T &operator*() const { return *best; }
  const T *operator->() const { return &*best; }
};

// A goal judged at several points (sizes): how many met it, and where it was missed.
class goal_tally {
 public:
  void add(bool met, const std::string &where);
  int met() const { return met_; }
  int total() const { return total_; }
  const std::string &missed() const { return missed_; }  // "a, b"; empty when none
  // "met at 3 of 4 sizes; missed at <prefix>a" (a note under a table).
  std::string note(const std::string &missed_prefix = "") const;
  // "met at 3 of 4 (missed at a)" (a headline).
  std::string brief() const;

 private:
  int met_ = 0, total_ = 0;
  std::string missed_;
};

// The index of the first element of got off by more than bound from want (or not a number), or
// -1 when every one is within it: a stage's output against a reference.
template <class T, class U>
long long first_mismatch(const std::vector<T> &got, const std::vector<U> &want, double bound) {
  for (std::size_t i = 0; i < got.size() && i < want.size(); ++i)
    if (!(std::fabs(double(got[i]) - double(want[i])) <= bound)) return (long long)i;
  return -1;
}

// The elements a bench's arrays get: `requested`, or as many as fit in percent% of free_bytes at
// bytes_per_element each (every array of the run counted), rounded down to a multiple of unit.
std::size_t fitted(std::size_t requested, std::size_t free_bytes, int percent,
                   std::size_t bytes_per_element, std::size_t unit);

// "met" or "MISSED": how a goal column reads.
inline std::string verdict(bool met) { return met ? "met" : "MISSED"; }

// A table of timed rows: the lead columns, the timing columns, then the bench's own columns.
std::vector<column> timed_columns(std::vector<column> lead, const std::vector<column> &trailing);
std::vector<cell> timed_row(std::vector<cell> lead, const measurement &m,
                            const std::vector<cell> &trailing);

// A comparison table: keys | stage_<unit> | <library>_<unit> | vs_<library> | min | max | pairs
// | extra | [goal].
struct versus_spec {
  versus_spec(std::string name_, std::string title_, std::string library_,
              std::vector<column> keys_)
      : name(std::move(name_)),
        title(std::move(title_)),
        library(std::move(library_)),
        keys(std::move(keys_)) {}
  // The optional parts, declared in a chain: versus_spec(...).in_microseconds().goal_at_least(1).
  versus_spec &in_microseconds() {
    microseconds = true;
    return *this;
  }
  versus_spec &ratio_digits(int digits) {
    ratio_precision = digits;
    return *this;
  }
  versus_spec &extra_columns(std::vector<column> cols) {
    extra = std::move(cols);
    return *this;
  }
  versus_spec &goal_at_least(double ratio) {
    goal = ratio;
    return *this;
  }
  std::string name, title;
  std::string library;        // "CUB": the columns CUB_ms and vs_CUB
  std::vector<column> keys;   // what a row is about: case, n, template...
  bool microseconds = false;  // times in us with 2 digits (else ms with 4)
  int ratio_precision = 3;
  std::vector<column> extra;  // after pairs
  double goal = 0;            // > 0: a goal column, met when the median ratio >= goal
};
std::vector<column> versus_columns(const versus_spec &spec);
bool versus_met(const versus_spec &spec, const comparison &cmp);
std::vector<cell> versus_row(const versus_spec &spec, std::vector<cell> keys, const comparison &cmp,
                             const std::vector<cell> &extra = {});

// A sweep of two launch parameters (listing 11.3's table): a quick look at each cell, its rate
// amount / time; a row's best rate and the column it was at; the quickest cell overall.
struct grid_spec {
  std::string name, title;
  std::string row_axis, column_axis;  // "unroll", "threads"
  std::string rate;                   // "GB/s": the columns max_<rate> and max_<column_axis>
  std::vector<int> rows, columns;
  double amount = 0;  // per call, in the rate's unit x 1e6 per ms
};
// The sweep's table, empty, with its heatmap hint.
table grid_table(const grid_spec &spec);
// A row of it: the row's value, a rate per column ("-": refused), the row's best and its column.
std::vector<cell> grid_row(const grid_spec &spec, int row,
                           const std::vector<std::optional<double>> &ms);

// --- pieces that measure ----------------------------------------------------------------------

// fitted() against this GPU's free memory, in units of 2^20 elements; when it shrinks the run,
// one line says so: "note: --N 4096M does not fit in 139.1 GiB free; using 3712M ints".
std::size_t fit_device(std::int64_t requested_m, int percent, std::size_t bytes_per_element,
                       const std::string &flag, const std::string &what);

// Whether --only selects one of these labels or a stage of type S: a part of a bench that has
// no row to run sets nothing up.
template <class S>
bool any_selected(const session &s, const std::vector<std::string> &labels) {
  for (const std::string &l : labels)
    if (s.selected(l)) return true;
  for (const S &st : course::registered<S>())
    if (s.selected(st.info.id)) return true;
  return false;
}

// got against want within bound; at the first element off, a failure "<who><where(i)> = <got>,
// expected <want>" (7 decimals). Whether every element was within.
template <class T, class U, class Where>
bool expect_near(session &s, const std::string &who, const std::vector<T> &got,
                 const std::vector<U> &want, double bound, Where where) {
  const long long i = first_mismatch(got, want, bound);
  if (i < 0) return true;
  char text[96];
  std::snprintf(text, sizeof text, " = %.7f, expected %.7f", double(got[std::size_t(i)]),
                double(want[std::size_t(i)]));
  s.fail(who + where(std::size_t(i)) + text);
  return false;
}

// A table of timed rows (timed_columns), printed and reported by finish().
class timed_table {
 public:
  timed_table(session &s, std::string name, std::string title, std::vector<column> lead,
              const std::vector<column> &trailing);
  // Adds the row and, when its spread is high, a note naming `label`.
  void add(const std::string &label, std::vector<cell> lead, const measurement &m,
           const std::vector<cell> &trailing);
  table &get() { return table_; }
  void finish() { s_.finish(std::move(table_)); }

 private:
  session &s_;
  table table_;
};

// The sweep (grid_spec), measured: the table and the quickest (row, column), none when every
// cell was refused.
struct grid_result {
  table t;
  std::optional<std::pair<int, int>> best;
};
grid_result sweep_grid(session &s, const grid_spec &spec,
                       const std::function<work(int row, int column)> &make, std::size_t bytes);

// A stage and its library baseline interleaved, a row per case (see versus_spec).
class versus {
 public:
  versus(session &s, versus_spec spec);
  // Baseline and stage interleaved over a working set of `bytes`; then check() (the stage's
  // result is in place); then the row, a noise note for each side that names one (who_stage,
  // who_baseline; empty: none) and, with a goal, the tally at `where`.
  // extra: the cells after pairs, from the comparison.
  using extra_cells = std::function<std::vector<cell>(const comparison &)>;
  comparison pair(std::vector<cell> keys, const work &baseline, const work &stage,
                  std::size_t bytes, const std::function<void()> &check,
                  const std::string &who_stage, const std::string &who_baseline = "",
                  const extra_cells &extra = {}, const std::string &where = "");
  // One part of the headline, joined with the others by headline().
  void headline_part(std::string part) { parts_.push_back(std::move(part)); }
  // "<prefix> <part><sep> <part> <suffix>", added to the report's headlines.
  void headline(const std::string &prefix, const std::string &sep, const std::string &suffix);
  void note(std::string line) { table_.note(std::move(line)); }
  goal_tally &tally() { return tally_; }
  const versus_spec &spec() const { return spec_; }
  void finish() { s_.finish(std::move(table_)); }

 private:
  session &s_;
  versus_spec spec_;
  table table_;
  goal_tally tally_;
  std::vector<std::string> parts_;
};

// The progression table (bench_session.h's progression) declared: stages, baseline, ceilings.
class declared_progression : public progression {
 public:
  declared_progression(session &s, progression_spec spec) : progression(s, spec), s_(s) {}

  // A ceiling row named `label`, measured now when --only selects it (0 and no row otherwise);
  // with divides, the % column divides by it. Its row comes after the stages and the library.
  double ceiling(const std::string &label, const std::string &config,
                 const std::function<double()> &measure, bool divides = true);
  // The library baseline, timed now (a profiled row) when --only selects it, then check(); the
  // vs_<library> column divides its time; its row comes after the stages.
  std::optional<measurement> baseline(const std::string &label, const work &fn, std::size_t bytes,
                                      const std::function<void()> &check = {});
  // Each registered stage of type S: a TODO one gets its TODO row when --only selects it, any
  // other goes to each(stage), which decides on its rows.
  template <class S, class F>
  void stage_loop(F &&each) {
    for (const S &st : course::registered<S>()) {
      if (st.info.todo) {
        if (s_.selected(st.info.id)) todo(st.info.id);
        continue;
      }
      each(st);
    }
  }
  // A stage at its best configuration when --only selects `label`: a quick look at each
  // candidate (a refused one is passed over), the timed row (profiled) at the quickest, then
  // check(config). nullopt when not selected or every candidate is refused. chain: the row
  // takes part in the speed-up column (a variant of the previous stage does not).
  template <class C, class Make, class Text, class Check>
  std::optional<std::pair<C, measurement>> tuned(const std::string &label,
                                                 const std::vector<C> &candidates, Make make,
                                                 Text config_text, std::size_t bytes, Check check,
                                                 bool chain = true) {
    if (!s_.selected(label)) return std::nullopt;
    const auto best = s_.best(candidates, make, bytes);
    if (!best) return std::nullopt;
    const measurement m = s_.time(label, make(best->first), bytes, true);
    check(best->first);
    row(label, config_text(best->first), m, chain);
    return std::make_pair(best->first, m);
  }
  // The library row, then the ceiling rows, then prints and reports the table.
  void finish();

 private:
  session &s_;
  std::optional<std::pair<std::string, measurement>> library_;
  std::vector<std::pair<std::string, std::pair<std::string, double>>> ceilings_;
};

}  // namespace bench
}  // namespace course
