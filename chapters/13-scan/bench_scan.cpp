// SPDX-License-Identifier: BSD-3-Clause
// Chapter 13 benchmark: every scan stage, CUB's DeviceScan, DeviceSelect and DevicePartition, in
// one run. One function per table; the measuring frame (options, adaptive repeats, L2 flush,
// interleaving, NVTX profile ranges, failure accounting) is harness/bench_session.h. Every row
// carries median/min/max/repeats/spread of the per-call time and the batch figure.
//
// progression (--N Mints, default 256M): each scan stage's inclusive scan at its best block size
// out of 128..1024: Gelem/s, % of the float4 copy kernel's rate (the bound of a scan that moves 2N
// ints), the ratio to CUB DeviceScan::InclusiveSum timed the same way; the book's global traffic
// per element under the table (4N scan-then-fan, 3N reduce-then-scan, 2N a single pass).
// vs_CUB: the fastest scan stage and the fastest compaction stage against CUB, interleaved
// (A-B-A-B...), the ratio CUB/stage with its range over the pairs, at N and at an odd n = N - 3
// (no multiple of any tile): the scan aligned, with the input 1, 2 or 3 elements past a 16-byte
// boundary, and with the output 1 past one (both sides on the same pointers); compaction aligned
// and with the input + 1. The goals (scan >= 1.00x CUB in every case; compaction at N and at the
// odd n) met or missed.
// compaction: the odd ints kept (stages 07 and 09) against CUB DeviceSelect::If; both sides bring
// the count to the host inside the timed call. split (stage 12, a stable partition) against CUB
// DevicePartition::If (the others in reverse order, no count pass). off_fast_path: stages 05, 08,
// 07, 09 and CUB per call in compaction's three cases above. warp_scans: stage 06's warp scans over
// 32-element segments (memory-bound), warp_scan_lab: each segment scanned --k times per load
// (compute-bound, Gscans/s). by_n: Gelem/s against n, 2^10 .. 2^28 (the L2 flushed before each
// call where the input fits in it). segmented: stage 11 against CUB InclusiveSumByKey on 0/1 keys.
// Every output is compared with the host's; a wrong one makes the program exit 1.
#include "cub_baseline.h"
#include "host_scan.h"
#include "scan.h"

#include "common/cli.h"
#include "common/device.h"
#include "common/memory.h"
#include "common/random.h"
#include "common/random_fill.h"
#include "harness/bench.h"
#include "harness/bench_session.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <iomanip>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace bench = course::bench;
using bench::cell;
using bench::plot_hint;
using bench::table;

namespace {

constexpr std::size_t mega = std::size_t(1) << 20;
constexpr std::uint64_t seed = 13;
constexpr int lo = -1000, hi = 1000;
const std::string cub_scan_label = "CUB DeviceScan::InclusiveSum";
const std::string cub_select_label = "CUB DeviceSelect::If";
const std::string cub_partition_label = "CUB DevicePartition::If (others reversed)";
const std::string cub_by_key_label = "CUB InclusiveSumByKey";
const std::string copy_label = "ceiling: float4 copy kernel";
const std::vector<int> block_sizes = {128, 256, 512, 1024};

struct pick {
  const scan::stage *stage = nullptr;
  int threads = 0;
};

// A case of the off-fast-path tables: m elements from in + in_offset to out + out_offset.
struct case_t {
  std::string name;
  std::size_t in_offset, out_offset, m;
};
// What a compaction of a case keeps: a run of context::h_odd.
struct kept_run {
  const int *data;
  std::size_t size;
};

// What every table uses: the input on the device, the output, the host's answers, the picks.
struct context {
  bench::session &s;
  std::size_t n, n_odd;  // n_odd = N - 3: N is a multiple of 2^20, N - 3 a multiple of no tile
  unsigned k;
  std::vector<int> h_in, h_incl, h_odd;  // N + 3 of each: inputs up to in + 3 hold N elements
  course::device_buffer<int> in, out;
  // Where verify copies the output home: pinned (a DMA at full speed) and allocated once, as a
  // vector of up to 256M ints per check cost more than the calls it checks.
  course::host_buffer<int> got;
  course::device_buffer<unsigned> d_count{1};
  scan::workspace ws;
  scan::cub_baseline cub;
  pick scan_best, compact_best;
  std::map<std::string, double>
      scan_ms;             // "05" -> the stage's per-call median at N (the goal lines)
  std::size_t count = 0;   // the count the last compaction or split call returned
  unsigned cub_count = 0;  // CUB's count, copied home in every call

  context(bench::session &session, std::size_t n_, unsigned k_)
      : s(session),
        n(n_),
        n_odd(n_ - 3),
        k(k_),
        h_in(n_ + 3),
        h_incl(n_ + 3),
        in(n_ + 3),
        out(n_ + 1),
        got(n_ + 1, course::host_memory::pinned) {
    course::fill_random_host(h_in.data(), h_in.size(), seed, lo, hi);
    scan::host_inclusive_scan(h_incl.data(), h_in.data(), h_in.size());
    CUDA_CHECK(
        cudaMemcpy(in.get(), h_in.data(), h_in.size() * sizeof(int), cudaMemcpyHostToDevice));
    for (int x : h_in)
      if (x & 1) h_odd.push_back(x);
  }
  // The scan's goal cases: aligned; the input 1, 2 and 3 elements past a 16-byte boundary (a
  // sub-range, a header before the data); the output 1 element past one, the input aligned. Each
  // at N and at the odd n.
  std::vector<case_t> scan_cases() const {
    std::vector<case_t> all;
    for (const auto &at : std::vector<std::pair<std::string, std::pair<std::size_t, std::size_t>>>{
             {"aligned", {0, 0}},
             {"input + 1", {1, 0}},
             {"input + 2", {2, 0}},
             {"input + 3", {3, 0}},
             {"output + 1", {0, 1}}}) {
      all.push_back({at.first + ", N", at.second.first, at.second.second, n});
      all.push_back({at.first + ", odd n = N - 3", at.second.first, at.second.second, n_odd});
    }
    return all;
  }
  // Compaction's cases, and the per-call table's: aligned at N and at the odd n, input + 1.
  std::vector<case_t> cases() const {
    return {{"aligned, N", 0, 0, n},
            {"aligned, odd n = N - 3", 0, 0, n_odd},
            {"input + 1, odd n = N - 3", 1, 0, n_odd}};
  }
  void clear() { CUDA_CHECK(cudaMemset(out.get(), 0xFF, (n + 1) * sizeof(int))); }
  // out[out_offset + i] == want(i) for i < m, else a failure (the run goes on, the program exits
  // 1).
  template <class Want>
  void verify_each(const std::string &who, std::size_t m, std::size_t out_offset, Want want) {
    CUDA_CHECK(cudaStreamSynchronize(s.stream()));
    if (m)
      CUDA_CHECK(
          cudaMemcpy(got.get(), out.get() + out_offset, m * sizeof(int), cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < m; ++i) {
      if (got[i] == want(i)) continue;
      s.fail(who + ", n=" + std::to_string(m) + ": first wrong [" + std::to_string(i) +
             "]: expected " + std::to_string(want(i)) + ", got " + std::to_string(got[i]));
      return;
    }
  }
  // out[0, m) == want[0, m).
  void verify(const std::string &who, const int *want, std::size_t m) {
    verify_each(who, m, 0, [want](std::size_t i) { return want[i]; });
  }
  // A case's inclusive scan: the scan of in[in_offset, in_offset + m) is h_incl from in_offset on,
  // less the sum before in_offset.
  void verify_scan(const std::string &who, const case_t &c) {
    const int before = c.in_offset ? h_incl[c.in_offset - 1] : 0;
    const int *from = h_incl.data() + c.in_offset;
    verify_each(who, c.m, c.out_offset,
                [from, before](std::size_t i) { return scan::wrap_add(from[i], -before); });
  }
  // The odd elements of in[in_offset, in_offset + m): a run of h_odd.
  kept_run odd_of(const case_t &c) const {
    const auto odd = [](int x) { return (x & 1) != 0; };
    const auto first = h_in.begin() + std::ptrdiff_t(c.in_offset);
    const std::size_t skip = std::size_t(std::count_if(h_in.begin(), first, odd));
    return {h_odd.data() + skip,
            std::size_t(std::count_if(first, first + std::ptrdiff_t(c.m), odd))};
  }
  // A compaction's count and kept elements.
  void verify_kept(const std::string &who, std::size_t got_count, const kept_run &want) {
    if (s.expect(who + " count", want.size, got_count, want.size))
      verify(who, want.data, want.size);
  }
  bench::work scan_work(const scan::stage &st, int threads, std::size_t in_offset, std::size_t m,
                        std::size_t out_offset = 0) {
    scan::config cfg;
    cfg.threads = threads;
    return [this, &st, cfg, in_offset, m, out_offset](cudaStream_t stream) {
      st.scan(out.get() + out_offset, in.get() + in_offset, m, true, cfg, ws, stream);
    };
  }
  bench::work cub_scan(std::size_t in_offset, std::size_t m, std::size_t out_offset = 0) {
    return [this, in_offset, m, out_offset](cudaStream_t stream) {
      cub.inclusive_sum(out.get() + out_offset, in.get() + in_offset, m, stream);
    };
  }
  // Stage 07/09's compaction or stage 12's split: the call returns the count (it waits for it).
  bench::work select_work(scan::compact_fn fn, int threads, std::size_t offset, std::size_t m) {
    scan::config cfg;
    cfg.threads = threads;
    return [this, fn, cfg, offset, m](cudaStream_t stream) {
      count = fn(out.get(), in.get() + offset, m, scan::predicate::odd, cfg, ws, stream);
    };
  }
  // CUB's select (partition = false) or partition, the count copied home in the call.
  bench::work cub_select(bool partition, std::size_t offset, std::size_t m) {
    return [this, partition, offset, m](cudaStream_t stream) {
      if (partition) cub.partition_odd(out.get(), d_count.get(), in.get() + offset, m, stream);
      else cub.select_odd(out.get(), d_count.get(), in.get() + offset, m, stream);
      CUDA_CHECK(cudaMemcpyAsync(&cub_count, d_count.get(), sizeof(unsigned),
                                 cudaMemcpyDeviceToHost, stream));
      CUDA_CHECK(cudaStreamSynchronize(stream));
    };
  }
};

const scan::stage *find_stage(const char *prefix) {
  for (const auto &s : course::registered<scan::stage>())
    if (s.info.id.rfind(prefix, 0) == 0 && !s.info.todo) return &s;
  return nullptr;
}

double gelems(double ms, std::size_t m) { return double(m) / (ms * 1e6); }

std::string fixed(double x, int decimals) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
  return buf;
}

// A table whose rows are: head cells, the timing columns, tail cells.
table timed_table(const std::string &name, const std::string &title,
                  std::vector<bench::column> head, const std::vector<bench::column> &tail) {
  for (const auto &c : bench::timing_columns()) head.push_back(c);
  for (const auto &c : tail) head.push_back(c);
  return table(name, title, head);
}
void timed_row(table &t, const std::string &label, std::vector<cell> head,
               const bench::measurement &m, const std::vector<cell> &tail) {
  for (const auto &c : bench::timing_cells(m)) head.push_back(c);
  for (const auto &c : tail) head.push_back(c);
  t.add_row(head);
  bench::warn_if_noisy(t, label, m);
}
std::vector<cell> todo_row(const std::string &label, std::size_t head_cells) {
  std::vector<cell> r = {label};
  for (std::size_t i = 1; i + 1 < head_cells; ++i) r.push_back(cell());
  r.push_back(std::string("TODO: not yet implemented"));
  return r;
}

// --- progression ------------------------------------------------------------------------------
// One scan stage's row: its best block size, then the timed (profiled) row.
void scan_row(context &c, bench::progression &prog, const scan::stage &st, double &best_ms,
              std::string &traffic) {
  const std::size_t bytes = 2 * c.n * sizeof(int);
  const auto best = c.s.best(
      block_sizes, [&](int t) { return c.scan_work(st, t, 0, c.n); }, bytes);
  if (!best) return;
  c.clear();
  const auto m = c.s.time(st.info.id, c.scan_work(st, best->first, 0, c.n), bytes, true);
  c.verify(st.info.id, c.h_incl.data(), c.n);
  prog.row(st.info.id, std::to_string(best->first), m);
  traffic += (traffic.empty() ? "" : ", ") + st.info.id + " " + std::to_string(st.traffic) + "N";
  if (best_ms == 0 || m.per_call.median < best_ms)
    best_ms = m.per_call.median, c.scan_best = {&st, best->first};
  c.scan_ms[st.info.id.substr(0, 2)] = m.per_call.median;
}

void progression_table(context &c) {
  const std::size_t bytes = 2 * c.n * sizeof(int);
  bench::progression prog(
      c.s, {"progression", "Inclusive scan progression (" + std::to_string(c.n / mega) + "M ints)",
            "threads", "Gelem/s", double(c.n), "%copy_ceiling", "vs_CUB",
            plot_hint::stage_bars("Gelem/s", copy_label, "float4 copy kernel, 2N ints moved")});
  double ceiling =
      0;  // a scan that reads and writes each int once cannot beat a copy: Gelem/s = GB/s / 8
  if (c.s.selected(copy_label)) {
    ceiling = bench::copy_kernel_gbs(c.n * sizeof(int)) / (2 * sizeof(int));
    prog.set_ceiling(ceiling);
  }
  std::optional<bench::measurement> cub;
  if (c.s.selected(cub_scan_label)) {
    c.clear();
    cub = c.s.time(cub_scan_label, c.cub_scan(0, c.n), bytes, true);
    c.verify(cub_scan_label, c.h_incl.data(), c.n);
    prog.set_library(*cub);
    c.s.results().param("cub_scan_gelems", gelems(cub->per_call.median, c.n));
  }
  double best_ms = 0;
  std::string traffic;
  for (const auto &st : course::registered<scan::stage>()) {
    if (!st.scan || !c.s.selected(st.info.id)) continue;
    if (st.info.todo) prog.todo(st.info.id);
    else scan_row(c, prog, st, best_ms, traffic);
  }
  if (cub) prog.library(cub_scan_label, *cub);
  if (ceiling > 0) prog.ceiling(copy_label, "2N", ceiling);
  prog.finish();
  if (!traffic.empty())
    std::printf("global traffic per element (ints moved): %s; CUB 2N\n", traffic.c_str());
  for (const auto &g : {std::make_pair("05", 0.75), std::make_pair("08", 0.95)}) {
    const auto at = c.scan_ms.find(g.first);
    if (at == c.scan_ms.end() || !cub) continue;
    const double r = cub->per_call.median / at->second;
    std::printf("goal %s >= %.2fx CUB (per-call medians): %.3fx, %s\n", g.first, g.second, r,
                r >= g.second ? "met" : "MISSED");
  }
}

// --- vs_CUB: interleaved, on the fast path and off it ------------------------------------------
// One operation's cases: the fastest stage against its CUB baseline, A-B-A-B...; the goal
// (>= 1.00x, median of the pairs) met or missed, for the scan in every case (any alignment of
// either array), for compaction at N and at the odd n; a headline with the ranges.
void compare_cases(context &c, table &t, const std::string &op, const pick &p, bool compaction) {
  const auto &st = *p.stage;
  std::string headline = op + " " + st.info.id + " against " +
                         (compaction ? cub_select_label : cub_scan_label) +
                         " (ratio CUB/stage, range over the interleaved pairs):";
  std::string goal = op + " " + st.info.id +
                     (compaction ? " >= 1.00x CUB at N and at the odd n"
                                 : " >= 1.00x CUB at N and at the odd n, at every alignment") +
                     " (median of the pairs):";
  bool met = true;
  for (const case_t &k : compaction ? c.cases() : c.scan_cases()) {
    const bench::work stage = compaction
                                  ? c.select_work(st.compact, p.threads, k.in_offset, k.m)
                                  : c.scan_work(st, p.threads, k.in_offset, k.m, k.out_offset);
    const bench::work base = compaction ? c.cub_select(false, k.in_offset, k.m)
                                        : c.cub_scan(k.in_offset, k.m, k.out_offset);
    const auto cmp = c.s.interleaved(base, stage, 2 * k.m * sizeof(int));
    if (compaction) c.verify_kept(st.info.id + ", " + k.name, c.count, c.odd_of(k));
    else c.verify_scan(st.info.id + ", " + k.name, k);
    t.add_row({op, st.info.id, k.name, double(k.m), double(k.in_offset), double(k.out_offset),
               cmp.stage.per_call.median, cmp.baseline.per_call.median, cmp.ratio.median,
               cmp.ratio.min, cmp.ratio.max, double(cmp.ratio.pairs)});
    bench::warn_if_noisy(t, st.info.id + ", " + k.name, cmp.stage);
    bench::warn_if_noisy(t, "CUB, " + op + ", " + k.name, cmp.baseline);
    headline += " " + k.name + " " + bench::range_text(cmp.ratio, 3) + ";";
    if (!compaction || (k.in_offset == 0 && k.out_offset == 0)) {
      const bool ok = cmp.ratio.median >= 1.0;
      met = met && ok;
      std::ostringstream median;
      median << std::fixed << std::setprecision(3) << cmp.ratio.median;
      goal += " " + k.name + " median " + median.str() + "x (pairs " +
              bench::range_text(cmp.ratio, 3) + ")" + (ok ? " met;" : " MISSED;");
    }
  }
  goal.pop_back();
  headline.pop_back();
  t.note("goal " + goal +
         (met ? "" : " -- missed: the README's stage 08 says where the time goes"));
  c.s.results().headline(headline + " (" + std::to_string(c.n / mega) + "M ints)");
  c.s.results().headline("goal " + goal);
}

void vs_cub_table(context &c) {
  table t(
      "vs_CUB",
      "The fastest scan and compaction stages against CUB, interleaved (ratio = CUB time / stage "
      "time, per pair; the count copied home in every compaction call, on both sides)",
      {{"op", 0},
       {"stage", 0},
       {"case", 0},
       {"n", 0},
       {"in_offset", 0},
       {"out_offset", 0},
       {"stage_ms", 4},
       {"CUB_ms", 4},
       {"vs_CUB", 3},
       {"min", 3},
       {"max", 3},
       {"pairs", 0}});
  if (c.scan_best.stage && c.s.selected(cub_scan_label))
    compare_cases(c, t, "scan", c.scan_best, false);
  if (c.compact_best.stage && c.s.selected(cub_select_label))
    compare_cases(c, t, "compaction", c.compact_best, true);
  c.s.finish(std::move(t));
}

// --- compaction and split ----------------------------------------------------------------------
// One table of stages that keep the odd ints (compaction: 07, 09; split: 12) against CUB.
struct select_spec {
  std::string name, title, cub_label, goal;
  bool partition;         // CUB DevicePartition::If (the others reversed), the split stages
  double goal_ratio = 0;  // a goal line when > 0
};

void select_table(context &c, const select_spec &spec, const std::vector<int> &want_split,
                  std::size_t want_kept) {
  const std::size_t bytes = 2 * c.n * sizeof(int);
  table t = timed_table(spec.name, spec.title, {{"series", 0}, {"threads", 0}},
                        {{"Gelem/s", 1}, {"vs_CUB", 3}});
  auto check = [&](const std::string &who, std::size_t got, bool reversed) {
    if (!spec.partition) return c.verify_kept(who, got, c.odd_of({"", 0, 0, c.n}));
    if (!c.s.expect(who + " count", c.n, got, want_kept)) return;
    std::vector<int> want(want_split);
    if (reversed) std::reverse(want.begin() + std::ptrdiff_t(want_kept), want.end());
    c.verify(who + (reversed ? " (the others reversed)" : ""), want.data(), c.n);
  };
  std::optional<bench::measurement> cub;
  if (c.s.selected(spec.cub_label)) {
    c.clear();
    cub = c.s.time(spec.cub_label, c.cub_select(spec.partition, 0, c.n), bytes);
    check(spec.cub_label, c.cub_count, true);
  }
  double best_ms = 0;
  for (const auto &st : course::registered<scan::stage>()) {
    const scan::compact_fn fn = spec.partition ? st.split : st.compact;
    if (!fn || !c.s.selected(st.info.id)) continue;
    if (st.info.todo) {
      t.add_row(todo_row(st.info.id, 2));
      continue;
    }
    const auto best = c.s.best(
        block_sizes, [&](int th) { return c.select_work(fn, th, 0, c.n); }, bytes);
    if (!best) continue;
    c.clear();
    const auto m = c.s.time(st.info.id, c.select_work(fn, best->first, 0, c.n), bytes, true);
    check(st.info.id, c.count, false);
    const double r = cub ? cub->per_call.median / m.per_call.median : 0;
    timed_row(t, st.info.id, {st.info.id, double(best->first)}, m,
              {gelems(m.per_call.median, c.n), cub ? cell(r) : cell()});
    if (spec.goal_ratio > 0 && cub && st.info.id.rfind("09", 0) == 0)
      t.note(spec.goal + ": " + fixed(r, 3) + "x (per-call medians), " +
             (r >= spec.goal_ratio ? "met" : "MISSED"));
    if (!spec.partition && (best_ms == 0 || m.per_call.median < best_ms))
      best_ms = m.per_call.median, c.compact_best = {&st, best->first};
  }
  if (cub)
    timed_row(t, spec.cub_label, {spec.cub_label, std::string("library")}, *cub,
              {gelems(cub->per_call.median, c.n), 1.0});
  t.set_plot({"bars", "series", "Gelem/s"});
  c.s.finish(std::move(t));
}

void compaction_table(context &c) {
  select_table(c,
               {"compaction",
                "Stream compaction, keep the odd ints (" + std::to_string(c.n / mega) +
                    "M ints; the count copied to the host in every call)",
                cub_select_label, "goal 09_compact_lookback >= 0.90x CUB", false, 0.9},
               {}, 0);
}

// Whether a table has a row to run (--only): one with none returns before its host answers, which
// take seconds over 256M ints, and every profile capture of a stage starts the bench afresh.
template <class Has>
bool stage_selected(const context &c, Has has) {
  for (const auto &st : course::registered<scan::stage>())
    if (has(st) && c.s.selected(st.info.id)) return true;
  return false;
}

void split_table(context &c) {
  if (!c.s.selected(cub_partition_label) &&
      !stage_selected(c, [](const scan::stage &st) { return st.split != nullptr; }))
    return;
  std::vector<int> want(c.n);
  const std::size_t kept =
      scan::host_split(want.data(), c.h_in.data(), c.n, [](int x) { return (x & 1) != 0; });
  select_table(c,
               {"split",
                "Stream split, the odd ints first, then the others (" + std::to_string(c.n / mega) +
                    "M ints; the count copied to the host in every call)",
                cub_partition_label, "", true, 0},
               want, kept);
}

// --- off the fast path: per call, stages 05, 08, 07, 09 and CUB in the three cases
// ----------------
void off_case(context &c, table &t, const case_t &k) {
  const std::size_t bytes = 2 * k.m * sizeof(int);
  std::optional<bench::measurement> cub_scan, cub_sel;
  auto row = [&](const std::string &label, cell threads, const bench::measurement &m,
                 const std::optional<bench::measurement> &base) {
    timed_row(t, label + ", " + k.name, {label, k.name, threads}, m,
              {gelems(m.per_call.median, k.m),
               base ? cell(base->per_call.median / m.per_call.median) : cell()});
  };
  if (c.s.selected(cub_scan_label)) {
    cub_scan = c.s.time(cub_scan_label, c.cub_scan(k.in_offset, k.m), bytes);
    c.verify_scan(cub_scan_label + ", " + k.name, k);
  }
  if (c.s.selected(cub_select_label)) {
    cub_sel = c.s.time(cub_select_label, c.cub_select(false, k.in_offset, k.m), bytes);
    c.verify_kept(cub_select_label + ", " + k.name, c.cub_count, c.odd_of(k));
  }
  for (const char *id : {"05", "08", "07", "09"}) {
    const scan::stage *st = find_stage(id);
    if (!st || !c.s.selected(st->info.id) || !(st->scan || st->compact)) continue;
    auto make = [&](int th) {
      return st->scan ? c.scan_work(*st, th, k.in_offset, k.m)
                      : c.select_work(st->compact, th, k.in_offset, k.m);
    };
    const auto best = c.s.best(block_sizes, make, bytes);
    if (!best) continue;
    c.clear();
    const auto m = c.s.time(st->info.id, make(best->first), bytes);
    if (st->scan) c.verify_scan(st->info.id + ", " + k.name, k);
    else c.verify_kept(st->info.id + ", " + k.name, c.count, c.odd_of(k));
    row(st->info.id, double(best->first), m, st->scan ? cub_scan : cub_sel);
  }
  if (cub_scan) row(cub_scan_label, std::string("library"), *cub_scan, cub_scan);
  if (cub_sel) row(cub_select_label, std::string("library"), *cub_sel, cub_sel);
}

void off_fast_path_table(context &c) {
  table t = timed_table(
      "off_fast_path",
      "Off the fast path: odd n and a misaligned input (output aligned), per call, ratio "
      "to CUB in the same case (the interleaved ratios: vs_CUB)",
      {{"series", 0}, {"case", 0}, {"threads", 0}}, {{"Gelem/s", 1}, {"vs_CUB", 3}});
  for (const case_t &k : c.cases()) off_case(c, t, k);
  c.s.finish(std::move(t));
}

// --- the warp scans: memory-bound (32-element segments) and compute-bound (the lab) --------------
void warp_scans_table(context &c, bool lab) {
  const scan::stage *st = find_stage("06");
  if (!st || !(lab ? st->warp_scan_lab != nullptr : st->warp_scan != nullptr)) return;
  auto label_of = [lab](scan::warp_form form) {
    return std::string(lab ? "warp scan lab " : "warp scan ") + scan::to_string(form);
  };
  if (std::none_of(std::begin(scan::all_warp_forms), std::end(scan::all_warp_forms),
                   [&](scan::warp_form form) { return c.s.selected(label_of(form)); }))
    return;
  const std::size_t m = lab ? std::min<std::size_t>(c.n, 64 * mega) : c.n;
  std::vector<int> want(c.h_in.begin(), c.h_in.begin() + std::ptrdiff_t(m));
  for (unsigned r = 0; r < (lab ? c.k : 1u); ++r)
    for (std::size_t b = 0; b < m; b += 32)
      scan::host_inclusive_scan(want.data() + b, want.data() + b, std::min<std::size_t>(32, m - b));
  const std::string rate = lab ? "Gscans/s" : "Gelem/s";
  table t = lab ? timed_table("warp_scan_lab",
                              "Warp scans, compute-bound: each 32-element segment scanned " +
                                  std::to_string(c.k) + " times per load (" +
                                  std::to_string(m / mega) + "M ints)",
                              {{"form", 0}, {"k", 0}}, {{rate, 1}, {"vs_conditional", 2}})
                : timed_table("warp_scans",
                              "Warp scans over 32-element segments (" + std::to_string(m / mega) +
                                  "M ints)",
                              {{"form", 0}}, {{rate, 1}, {"vs_conditional", 2}});
  double conditional_ms = 0;
  for (scan::warp_form form : scan::all_warp_forms) {
    const std::string label = label_of(form);
    if (!c.s.selected(label)) continue;
    c.clear();
    const auto tm = c.s.time(
        label,
        [&c, st, form, m, lab](cudaStream_t stream) {
          if (lab) st->warp_scan_lab(c.out.get(), c.in.get(), m, form, c.k, stream);
          else st->warp_scan(c.out.get(), c.in.get(), m, form, true, stream);
        },
        2 * m * sizeof(int));
    c.verify(label, want.data(), m);
    if (form == scan::warp_form::conditional) conditional_ms = tm.per_call.median;
    std::vector<cell> head = {std::string(scan::to_string(form))};
    if (lab) head.push_back(double(c.k));
    timed_row(t, label, head, tm,
              {gelems(tm.per_call.median, m) * (lab ? c.k : 1u),
               conditional_ms > 0 ? cell(conditional_ms / tm.per_call.median) : cell()});
  }
  t.set_plot({"bars", "form", rate});
  c.s.finish(std::move(t));
}

// --- by_n: Gelem/s against n ---------------------------------------------------------------------
void by_n_table(context &c) {
  table t = timed_table(
      "by_n",
      "Gelem/s against n: two-level, decoupled look-back and CUB (the L2 flushed before "
      "each call where the input fits in it)",
      {{"n", 0}, {"series", 0}}, {{"time_us", 1}, {"Gelem/s", 2}});
  auto sweep = [&](const std::string &name, const std::function<bench::work(std::size_t)> &make) {
    if (!c.s.selected(name)) return;
    for (int e = 10; e <= 28 && (std::size_t(1) << e) <= c.n; e += 2) {
      const std::size_t m = std::size_t(1) << e;
      const auto tm = c.s.time(name, make(m), 2 * m * sizeof(int));
      c.verify(name, c.h_incl.data(), m);  // the scan of a prefix is the prefix of the scan
      timed_row(t, name + " at n=" + std::to_string(m), {double(m), name}, tm,
                {1000 * tm.per_call.median, gelems(tm.per_call.median, m)});
    }
  };
  for (const char *id : {"05", "08"})
    if (const scan::stage *st = find_stage(id); st && st->scan)
      sweep(st->info.id,
            [&c, st](std::size_t m) { return c.scan_work(*st, scan::config{}.threads, 0, m); });
  sweep("CUB", [&c](std::size_t m) { return c.cub_scan(0, m); });
  plot_hint hint{"lines", "n", "Gelem/s"};
  hint.series = "series";
  hint.logx = true;
  t.set_plot(hint);
  c.s.finish(std::move(t));
}

// --- segmented scan ------------------------------------------------------------------------------
// One density of heads: random heads, one in `one_in` on average; CUB's keys alternate 0/1 from
// segment to segment (one byte per element on both sides). The stage's first density is profiled.
void segmented_density(context &c, table &t, int one_in, bool profiled) {
  const std::size_t n = c.n, bytes = n * (2 * sizeof(int) + 1);
  std::vector<std::uint8_t> h_heads(n), h_keys(n);
  std::uint8_t key = 0;
  for (std::size_t i = 0; i < n; ++i) {
    h_heads[i] = course::random_int(seed + 1, i, 0, one_in - 1) == 0;
    if (h_heads[i] && i > 0) key ^= 1;
    h_keys[i] = key;
  }
  std::vector<int> want(n);
  scan::host_segmented_scan(want.data(), c.h_in.data(), h_heads.data(), n, true);
  course::device_buffer<std::uint8_t> d_heads(n), d_keys(n);
  CUDA_CHECK(cudaMemcpy(d_heads.get(), h_heads.data(), n, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_keys.get(), h_keys.data(), n, cudaMemcpyHostToDevice));
  const std::string density = "1 in " + std::to_string(one_in);
  std::optional<bench::measurement> cub;
  if (c.s.selected(cub_by_key_label)) {
    c.clear();
    cub = c.s.time(
        cub_by_key_label,
        [&](cudaStream_t st) {
          c.cub.inclusive_sum_by_key(c.out.get(), c.in.get(), d_keys.get(), n, st);
        },
        bytes);
    c.verify(cub_by_key_label + ", heads " + density, want.data(), n);
  }
  for (const auto &st : course::registered<scan::stage>()) {
    if (!st.segmented_scan || !c.s.selected(st.info.id)) continue;
    if (st.info.todo) {
      t.add_row({st.info.id, density, std::string("TODO: not yet implemented")});
      continue;
    }
    auto make = [&](int th) -> bench::work {
      scan::config cfg;
      cfg.threads = th;
      return [&c, &st, &d_heads, cfg, n](cudaStream_t stream) {
        st.segmented_scan(c.out.get(), c.in.get(), d_heads.get(), n, true, cfg, c.ws, stream);
      };
    };
    const auto best = c.s.best(block_sizes, make, bytes);
    if (!best) continue;
    c.clear();
    const auto m = c.s.time(st.info.id, make(best->first), bytes, profiled);
    c.verify(st.info.id + ", heads " + density, want.data(), n);
    timed_row(t, st.info.id + ", heads " + density, {st.info.id, density, double(best->first)}, m,
              {gelems(m.per_call.median, n),
               cub ? cell(cub->per_call.median / m.per_call.median) : cell()});
  }
  if (cub)
    timed_row(t, cub_by_key_label + ", heads " + density,
              {cub_by_key_label, density, std::string("library")}, *cub,
              {gelems(cub->per_call.median, n), 1.0});
}

void segmented_table(context &c) {
  if (c.n > 0xffffffffu) return;  // CUB's count is 32-bit here
  if (!c.s.selected(cub_by_key_label) &&
      !stage_selected(c, [](const scan::stage &st) { return st.segmented_scan != nullptr; }))
    return;
  table t =
      timed_table("segmented",
                  "Segmented inclusive scan, head flags (" + std::to_string(c.n / mega) +
                      "M ints, one flag byte each), against CUB InclusiveSumByKey",
                  {{"series", 0}, {"heads", 0}, {"threads", 0}}, {{"Gelem/s", 1}, {"vs_CUB", 3}});
  segmented_density(c, t, 1000, true);
  segmented_density(c, t, 8, false);
  // Both densities above put several heads in every tile (8192 elements), so every tile's
  // look-back stops at once; one head in 100000 leaves most tiles without one, and the look-back
  // walks back across about 12 tiles on average: the case where the carried prefix matters.
  segmented_density(c, t, 100000, false);
  c.s.finish(std::move(t));
}

void body(bench::session &s, std::int64_t n_m, std::int64_t k) {
  std::size_t free_b = 0, total_b = 0;
  course::device_memory(free_b, total_b);
  std::size_t n = std::size_t(n_m) * mega;
  // input, output, the copy ceiling's two buffers, CUB's temporaries and the flag bytes
  const std::size_t fit = free_b / 100 * 20 / sizeof(int);
  if (n > fit) {
    n = fit / mega * mega;
    std::printf("note: --N %lldM does not fit in %.1f GiB free; using %zuM ints\n", (long long)n_m,
                free_b / 1073741824.0, n / mega);
  }
  s.results().param("n", double(n));
  s.results().param("n_odd", double(n - 3));
  std::printf("\nScan of %zuM random ints in [%d, %d]\n", n / mega, lo, hi);
  context c(s, n, unsigned(k));
  progression_table(c);
  compaction_table(c);
  split_table(c);
  vs_cub_table(c);
  off_fast_path_table(c);
  warp_scans_table(c, false);
  warp_scans_table(c, true);
  by_n_table(c);
  segmented_table(c);
}

}  // namespace

int main(int argc, char **argv) {
  // The defaults: chapters/13-scan/lessons.toml's [workload.bench] (COURSE_BENCH_*, from CMake).
  std::int64_t n_m = COURSE_BENCH_N, k = COURSE_BENCH_K;
  return bench::bench_main(
      argc, argv,
      {"bench_scan", "13-scan", "Chapter 13: scan", "Chapter 13: scan, every stage against CUB."},
      [&](course::options &cli) {
        cli.add("N", n_m, 1, 1024, "ints to scan, in units of 2^20")
            .add("k", k, 1, 4096, "warp_scan_lab: warp scans per element in the compute-bound lab");
      },
      [&](bench::session &s) { body(s, n_m, k); });
}
