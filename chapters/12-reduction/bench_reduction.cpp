// SPDX-License-Identifier: BSD-3-Clause
// Chapter 12 benchmark: every stage of the chapter, the read ceiling and CUB, in one run. One
// function per table, each declaring its stages, baseline and ceilings (harness/bench_decl.h);
// the measuring frame (options, adaptive repeats, L2 flush, interleaving, NVTX profile ranges,
// failure accounting) is harness/bench_session.h.
//
// progression (--N Mints, default 256M): each stage at its best block size of 32..1024 (a quick
// look at each; --threads T: at T, so that a run under ncu, whose timings are the profiler's,
// launches what a plain run does), then timed properly: GB/s of input read, % of the read
// ceiling (a float4 read kernel measured here), speed-up over the previous stage and the ratio
// to CUB DeviceReduce::Sum timed the same way. Stage 08 counts instead of summing: a row per
// vote.
// vs_CUB: the fastest stage and CUB interleaved (A-B-A-B...), the ratio CUB/stage with its range
// over the pairs, at n, at an odd n (no multiple of any tile: the partial last tile) and with the
// input offset by one element (a misaligned start: no vector loads from the first element).
// vs_CUB_by_n: the fastest stage against CUB at every n from 2^10 to 2^28, interleaved, the L2
// flushed before each call where the input fits in it; the goal (>= 1.00x CUB at every n) met or
// missed per n. by_n: GB/s against n for the book's fastest stage (01-09), the fastest, and CUB.
// lab (figure 12.1): pairwise against interleaved folding; labs/12-reduction/lab_folding.cu.
// Every answer is checked against the host's sum; a wrong one makes the program exit 1.
#include "cub_baseline.h"
#include "host_reference.h"
#include "lab_folding.h"
#include "reduction.h"

#include "common/cli.h"
#include "common/device.h"
#include "common/random.h"
#include "common/random_fill.h"
#include "harness/bench.h"
#include "harness/bench_decl.h"
#include "harness/bench_session.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace bench = course::bench;
using bench::cell;
using bench::plot_hint;
using bench::table;

namespace {

constexpr std::size_t mega = std::size_t(1) << 20;
constexpr std::uint64_t seed = 12;
constexpr int lo = -1000, hi = 1000;
const std::string cub_label = "CUB DeviceReduce::Sum";
const std::string ceiling_label = "ceiling: float4 read kernel";

int value(std::size_t i) { return course::random_int(seed, i, lo, hi); }

// The host's sums of any range of the input whose ends were named up front: exact prefix sums
// at those ends, in one pass over the input; a range's sum is the difference, mod 2^32.
class reference {
 public:
  reference(std::vector<std::size_t> ends, std::size_t n) {
    ends.push_back(0);
    std::sort(ends.begin(), ends.end());
    ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
    long long running = 0;
    std::size_t at = 0;
    for (std::size_t e : ends) {
      running += reduction::host_sum<long long>(
          e - at, [at](std::size_t i) { return (long long)value(at + i); });
      prefix_[e] = running;
      at = e;
    }
    positives_ = reduction::host_sum<unsigned long long>(
        n, [](std::size_t i) { return value(i) > 0 ? 1ull : 0ull; });
  }
  int sum(std::size_t first, std::size_t count) const {
    return reduction::wrap32(prefix_.at(first + count) - prefix_.at(first));
  }
  unsigned long long count_positive() const { return positives_; }

 private:
  std::map<std::size_t, long long> prefix_;
  unsigned long long positives_ = 0;
};

// The chosen stage and block size, for the tables after the progression.
struct pick {
  const reduction::stage *stage = nullptr;
  int threads = 0;
};

// What every table uses: the input on the device, the answers, the host's sums.
struct context {
  bench::session &s;
  std::size_t n, n_odd, n_offset;  // n_offset elements from in + 1
  std::vector<std::size_t> sizes;  // 2^10 .. 2^28, as far as n goes
  int threads = 0;                 // --threads: every stage at this block size (0: its fastest)
  course::device_buffer<int> in;
  course::device_buffer<int> answer{1};
  course::device_buffer<unsigned long long> count{1};
  reduction::workspace ws;
  reduction::cub_sum cub;
  reference ref;
  pick book_best, fastest;

  context(bench::session &session, std::size_t n_, std::vector<std::size_t> sizes_)
      : s(session),
        n(n_),
        n_odd(n_ - 999),
        n_offset(n_ - 1024),
        sizes(std::move(sizes_)),
        in(n_),
        cub(n_),
        ref(ends(), n_) {
    course::fill_random_device(in.get(), n, seed, lo, hi);
  }
  std::vector<std::size_t> ends() const {
    std::vector<std::size_t> e = sizes;
    for (std::size_t x : {n, n_odd, std::size_t(1), 1 + n_offset}) e.push_back(x);
    return e;
  }
  int answer_now() const {
    int h = 0;
    CUDA_CHECK(cudaMemcpy(&h, answer.get(), sizeof h, cudaMemcpyDeviceToHost));
    return h;
  }
  bench::work sum(const reduction::stage &st, int threads, std::size_t first, std::size_t m) {
    reduction::config cfg;
    cfg.threads = threads;
    return [this, &st, cfg, first, m](cudaStream_t stream) {
      st.reduce(answer.get(), in.get() + first, m, cfg, ws, stream);
    };
  }
  bench::work cub_sum(std::size_t first, std::size_t m) {
    return
        [this, first, m](cudaStream_t stream) { cub(answer.get(), in.get() + first, m, stream); };
  }
  void check(const std::string &who, std::size_t first, std::size_t m) {
    CUDA_CHECK(cudaStreamSynchronize(s.stream()));
    s.expect(who + (first ? " (offset " + std::to_string(first) + ")" : ""), m, answer_now(),
             ref.sum(first, m));
  }
};

double gbs(double ms, std::size_t elements) { return double(elements) * sizeof(int) / (ms * 1e6); }

// One stage's rows of the progression: its best block size, timed (a row per vote for stage 08,
// which counts).
void stage_rows(context &c, bench::declared_progression &prog, const reduction::stage &stage,
                bench::fastest<pick> &book_best) {
  const std::size_t bytes = c.n * sizeof(int);
  for (bool block_vote : stage.reduce ? std::vector<bool>{false} : std::vector<bool>{false, true}) {
    std::string label = stage.info.id;
    if (!stage.reduce)
      label += block_vote ? " (count, __syncthreads_count)" : " (count, __ballot_sync)";
    auto make = [&](int threads) -> bench::work {
      if (stage.reduce) return c.sum(stage, threads, 0, c.n);
      reduction::config cfg;
      cfg.threads = threads;
      return [&c, &stage, cfg, block_vote](cudaStream_t st) {
        stage.count(c.count.get(), c.in.get(), c.n, 0, block_vote, cfg, c.ws, st);
      };
    };
    auto check = [&](int) {
      if (stage.reduce) return c.check(label, 0, c.n);
      CUDA_CHECK(cudaStreamSynchronize(c.s.stream()));
      unsigned long long got = 0;
      CUDA_CHECK(cudaMemcpy(&got, c.count.get(), sizeof got, cudaMemcpyDeviceToHost));
      c.s.expect(label, c.n, got, c.ref.count_positive());
    };
    std::vector<int> sizes;
    for (int t : {32, 64, 128, 256, 512, 1024})
      if (reduction::supports(stage, t) && (c.threads == 0 || t == c.threads)) sizes.push_back(t);
    const auto row = prog.tuned(
        label, sizes, make, [](int t) { return std::to_string(t); }, bytes, check,
        stage.reduce != nullptr);
    if (!row || !stage.reduce) continue;
    if (stage.info.id < "10") book_best.offer({&stage, row->first}, row->second.per_call.median);
    if (stage.info.id >= "10") c.fastest = {&stage, row->first};
  }
}

void progression_table(context &c) {
  const std::size_t bytes = c.n * sizeof(int);
  bench::declared_progression prog(
      c.s, {"progression",
            "Reduction progression (" + std::to_string(c.n / mega) + "M ints, 4 B/element read)",
            "threads", "GB/s", double(bytes), "%read_ceiling", "vs_CUB",
            plot_hint::stage_bars("GB/s", ceiling_label, "read ceiling")});
  prog.ceiling(ceiling_label, "-", [&] {
    const double v = bench::read_kernel_gbs(bytes);
    c.s.results().param("read_kernel_gbs", v);
    return v;
  });
  if (const auto cub =
          prog.baseline(cub_label, c.cub_sum(0, c.n), bytes, [&] { c.check(cub_label, 0, c.n); }))
    c.s.results().param("cub_reduce_gbs", gbs(cub->per_call.median, c.n));
  bench::fastest<pick> book_best;
  prog.stage_loop<reduction::stage>(
      [&](const reduction::stage &stage) { stage_rows(c, prog, stage, book_best); });
  if (book_best) c.book_best = *book_best;
  prog.finish();
}

// The fastest stage against CUB, interleaved, on the fast path and off it.
void vs_cub_table(context &c) {
  if (!c.fastest.stage || !c.s.selected(cub_label)) return;
  const auto &st = *c.fastest.stage;
  bench::versus t(c.s, {"vs_CUB",
                        "Reduce " + st.info.id + " against " + cub_label +
                            ", interleaved (ratio = CUB time / stage time, per pair)",
                        "CUB",
                        {{"case", 0}, {"n", 0}, {"offset", 0}}});
  struct case_t {
    std::string name;
    std::size_t first, m;
  };
  for (const case_t &k : {case_t{"aligned", 0, c.n}, case_t{"odd n", 0, c.n_odd},
                          case_t{"offset by one", 1, c.n_offset}}) {
    const auto cmp = t.pair(
        {k.name, double(k.m), double(k.first)}, c.cub_sum(k.first, k.m),
        c.sum(st, c.fastest.threads, k.first, k.m), k.m * sizeof(int),
        [&] { c.check(st.info.id + " " + k.name, k.first, k.m); }, st.info.id + " " + k.name,
        "CUB " + k.name);
    t.headline_part(k.name + " " + bench::range_text(cmp.ratio));
  }
  t.headline("reduce " + st.info.id + " against CUB (range over the interleaved pairs):", ",",
             "(" + std::to_string(c.n / mega) + "M ints)");
  t.finish();
}

// The fastest stage against CUB at every n, interleaved, against the goal >= 1.00x.
void by_n_table(context &c, table &lines) {
  if (!c.fastest.stage || !c.s.selected(cub_label)) return;
  const auto &st = *c.fastest.stage;
  bench::versus t(
      c.s, bench::versus_spec(
               "vs_CUB_by_n",
               "Reduce " + st.info.id + " against CUB by n, interleaved; goal: >= 1.00x at every n",
               "CUB", {{"n", 0}})
               .in_microseconds()
               .extra_columns({{"L2_flushed", 0}})
               .goal_at_least(1.0));
  for (std::size_t m : c.sizes) {
    const std::string at = std::to_string(m);
    const auto cmp = t.pair(
        {double(m)}, c.cub_sum(0, m), c.sum(st, c.fastest.threads, 0, m), m * sizeof(int),
        [&] { c.check(st.info.id, 0, m); }, st.info.id + " at n=" + at, "CUB at n=" + at,
        [](const bench::comparison &k) {
          return std::vector<cell>{std::string(k.stage.flushed ? "yes" : "no")};
        },
        at);
    lines.add_row({double(m), st.info.id, 1e3 * cmp.stage.per_call.median,
                   gbs(cmp.stage.per_call.median, m)});
    lines.add_row({double(m), std::string("CUB"), 1e3 * cmp.baseline.per_call.median,
                   gbs(cmp.baseline.per_call.median, m)});
  }
  t.note("goal >= 1.00x CUB (median of the pairs): " + t.tally().note("n = "));
  c.s.results().headline("reduce " + st.info.id + " >= 1.00x CUB at every n from 1024 to " +
                         std::to_string(c.sizes.back()) +
                         " (median of the interleaved pairs): " + t.tally().brief());
  t.finish();
}

// GB/s against n: the book's fastest stage here; the fastest and CUB come from vs_CUB_by_n's pairs.
void by_n_lines_table(context &c, table lines) {
  if (c.book_best.stage && c.book_best.stage != c.fastest.stage &&
      c.s.selected(c.book_best.stage->info.id)) {
    const auto &st = *c.book_best.stage;
    for (std::size_t m : c.sizes) {
      const auto tm = c.s.time(st.info.id, c.sum(st, c.book_best.threads, 0, m), m * sizeof(int));
      c.check(st.info.id, 0, m);
      lines.add_row({double(m), st.info.id + " (the book's fastest)", 1e3 * tm.per_call.median,
                     gbs(tm.per_call.median, m)});
      bench::warn_if_noisy(lines, st.info.id + " at n=" + std::to_string(m), tm);
    }
  }
  plot_hint hint{"lines", "n", "GB/s"};
  hint.series = "series";
  hint.logx = true;
  lines.set_plot(hint);
  c.s.finish(std::move(lines));
}

// The lab of figure 12.1, pairwise against interleaved.
void lab_table(context &c) {
  namespace L = reduction::lab;
  bench::timed_table lab(c.s, "lab", "Lab, figure 12.1: pairwise against interleaved folding",
                         {{"kernel", 0}}, {{"rate", 1}, {"unit", 0}, {"vs_interleaved", 2}});
  auto add = [&](const std::string &label, const bench::measurement &m, double rate,
                 const std::string &unit, double base_ms) {
    lab.add(label, {label}, m,
            {rate, unit, base_ms > 0 ? cell(base_ms / m.per_call.median) : cell()});
  };
  const std::size_t m =
      std::min<std::size_t>(c.n, std::size_t(1) << 20) / L::fold_threads * L::fold_threads;
  const int blocks = int(m / L::fold_threads), reps = 64;
  const int want =
      reduction::wrap32(reps * (long long)c.ref.sum(0, m) + (long long)m * reps * (reps - 1) / 2);
  double base = 0;
  for (L::fold f : {L::fold::interleaved, L::fold::pairwise_divergent, L::fold::pairwise_strided}) {
    const std::string label = std::string("shared fold: ") + L::name(f);
    if (blocks == 0 || !c.s.selected(label)) continue;
    const auto tm = c.s.time(
        label,
        [&](cudaStream_t st) { L::fold_many(f, c.answer.get(), c.in.get(), blocks, reps, st); },
        m * sizeof(int));
    CUDA_CHECK(cudaStreamSynchronize(c.s.stream()));
    c.s.expect("lab " + label, m, c.answer_now(), want);
    if (f == L::fold::interleaved) base = tm.per_call.median;
    add(label, tm, double(m) * reps / (tm.per_call.median * 1e6), "Gvalues folded/s", base);
  }
  base = 0;
  for (bool contiguous : {false, true}) {
    const std::string label = contiguous ? "global reads: contiguous run per thread (pairwise)"
                                         : "global reads: grid-stride (interleaved)";
    if (!c.s.selected(label)) continue;
    const auto tm = c.s.time(
        label,
        [&](cudaStream_t st) {
          if (contiguous) L::sum_contiguous_runs(c.answer.get(), c.in.get(), c.n, st);
          else L::sum_grid_stride(c.answer.get(), c.in.get(), c.n, st);
        },
        c.n * sizeof(int));
    c.check("lab " + label, 0, c.n);
    if (!contiguous) base = tm.per_call.median;
    add(label, tm, gbs(tm.per_call.median, c.n), "GB/s", base);
  }
  lab.finish();
}

void body(bench::session &s, std::int64_t n_m, int threads) {
  // The input and the read ceiling's own buffer.
  const std::size_t n = bench::fit_device(n_m, 40, sizeof(int), "N", "ints");
  std::vector<std::size_t> sizes;
  for (int e = 10; e <= 28 && (std::size_t(1) << e) <= n; ++e) sizes.push_back(std::size_t(1) << e);
  s.results().param("n", double(n));
  std::printf("\nSum of %zuM random ints in [%d, %d] (%.2f GB read per call)\n", n / mega, lo, hi,
              n * sizeof(int) / 1e9);
  context c(s, n, sizes);
  c.threads = threads;
  progression_table(c);
  vs_cub_table(c);
  table lines("by_n", "GB/s against n: the book's fastest, the fastest, CUB",
              {{"n", 0}, {"series", 0}, {"time_us", 1}, {"GB/s", 1}});
  by_n_table(c, lines);
  by_n_lines_table(c, std::move(lines));
  lab_table(c);
}

}  // namespace

int main(int argc, char **argv) {
  // The defaults: chapters/12-reduction/lessons.toml's [workload.bench] (COURSE_BENCH_*, from
  // CMake).
  std::int64_t n_m = COURSE_BENCH_N, threads = 0;
  return bench::bench_main(
      argc, argv,
      {"bench_reduction", "12-reduction", "Chapter 12: reduction",
       "Chapter 12: reduction, every stage against the read ceiling and CUB."},
      [&](course::options &cli) {
        cli.add("N", n_m, 1, 4096, "ints to sum, in units of 2^20")
            .add(
                "threads", threads, 0, 1024,
                "every stage at this block size, a power of two from 32 (a stage without it is left out); 0: each "
                "stage at the fastest the bench finds");
      },
      [&](bench::session &s) { body(s, n_m, int(threads)); },
      [&]() -> std::string {
        if (threads == 0 || (threads >= 32 && (threads & (threads - 1)) == 0)) return "";
        return "--threads: expected 0 or a power of two from 32 to 1024, got " +
               std::to_string(threads);
      });
}
