// SPDX-License-Identifier: BSD-3-Clause
// Chapter 12 benchmark: every stage of the chapter, the read ceiling and CUB, in one run.
//
// Part 1 (--N Mints, default 256M): each stage's sum timed at every block size it accepts out
// of 32..1024, then the progression table at each stage's best block size: GB/s of input read,
// % of the read ceiling (a float4 read kernel measured here), speed-up over the previous stage
// and ratio to CUB DeviceReduce::Sum measured here. Stage 08 counts instead of summing; it gets
// a row per vote (ballot, __syncthreads_count) over the same input.
// Part 2: throughput against n, 2^10 .. 2^28 ints, for the fastest of the book's stages (01-09),
// stage 10 and CUB: where launch overhead ends and bandwidth begins.
// Part 3, a lab (figure 12.1): pairwise against interleaved folding, in shared memory (the same
// 256 values folded 64 times per block, so the fold is the whole cost) and in the order threads
// read global memory (contiguous runs per thread against the grid-stride loop); lab_folding.cu.
// Every answer is checked against the host's sum; a wrong one ends the program with status 1.
#include "cub_baseline.h"
#include "host_reference.h"
#include "lab_folding.h"
#include "reduction.h"

#include "common/cli.h"
#include "common/device.h"
#include "common/random.h"
#include "common/random_fill.h"
#include "harness/bench.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

using course::bench::cell;
using course::bench::table;

namespace {

constexpr std::size_t mega = std::size_t(1) << 20;
constexpr std::uint64_t seed = 12;
constexpr int lo = -1000, hi = 1000;

struct options_t {
  std::int64_t n_m = 256, repeats = 20;
  std::string results = "results";
};

// The host's answers for the prefixes of the input the benchmark sums: the sum mod 2^32 (the
// GPU's int arithmetic) and, for the whole input, the count of elements > 0.
struct reference {
  std::map<std::size_t, int> sums;
  unsigned long long positives = 0;
  reference(const std::vector<std::size_t> &sizes, std::size_t n) {
    for (std::size_t m : sizes) {
      const long long s = reduction::host_sum<long long>(m, [](std::size_t i) { return course::random_int(seed, i, lo, hi); });
      sums[m] = reduction::wrap32(s);
    }
    positives = reduction::host_sum<unsigned long long>(n, [](std::size_t i) { return course::random_int(seed, i, lo, hi) > 0 ? 1ull : 0ull; });
  }
  int sum(std::size_t m) const { return sums.at(m); }
  unsigned long long count_positive() const { return positives; }
};

bool ok = true;

template <class T>
T read_answer(const T *d) {
  T h{};
  CUDA_CHECK(cudaMemcpy(&h, d, sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

template <class T>
void verify(const std::string &who, std::size_t n, T got, T want) {
  if (got == want) return;
  std::fprintf(stderr, "WRONG RESULT: %s, n=%zu: expected %lld, got %lld\n", who.c_str(), n, (long long)want, (long long)got);
  ok = false;
}

}  // namespace

int main(int argc, char **argv) {
  options_t opt;
  course::options cli("bench_reduction", "Chapter 12: reduction, every stage against the read ceiling and CUB.");
  cli.add("N", opt.n_m, 1, 4096, "ints to sum, in units of 2^20")
      .add("repeats", opt.repeats, 3, 1000, "timed repeats per measurement (the median is reported)")
      .add("results", opt.results, "directory for the CSV and JSON results");
  cli.parse(argc, argv);
  return course::bench::run("bench_reduction", "12-reduction", "Chapter 12: reduction", opt.results,
                            [&](course::bench::report &rep) {

    std::size_t free_b = 0, total_b = 0;
    course::device_memory(free_b, total_b);
    std::size_t n = std::size_t(opt.n_m) * mega;
    const std::size_t fit = free_b / 100 * 40 / sizeof(int);  // the input and the read ceiling's own buffer
    if (n > fit) {
      std::printf("note: --N %lldM does not fit in %.1f GiB free; using %zuM ints\n", (long long)opt.n_m,
                  free_b / 1073741824.0, fit / mega);
      n = fit / mega * mega;
    }
    std::vector<std::size_t> sweep_sizes;
    for (int e = 10; e <= 28; e += 2)
      if ((std::size_t(1) << e) <= n) sweep_sizes.push_back(std::size_t(1) << e);
    std::vector<std::size_t> ref_sizes = sweep_sizes;
    if (std::find(ref_sizes.begin(), ref_sizes.end(), n) == ref_sizes.end()) ref_sizes.push_back(n);
    rep.param("n", double(n));
    const double bytes = double(n) * sizeof(int);
    std::printf("\nSum of %zuM random ints in [%d, %d] (%.2f GB read per call)\n", n / mega, lo, hi, bytes / 1e9);

    course::device_buffer<int> in(n);
    course::fill_random_device(in.get(), n, seed, lo, hi);
    const reference ref(ref_sizes, n);
    course::device_buffer<int> answer(1);
    course::device_buffer<unsigned long long> count(1);
    course::stream s;
    reduction::workspace ws;
    reduction::cub_sum cub(n);
    auto gbs = [&](double ms, std::size_t elements) { return double(elements) * sizeof(int) / (ms * 1e6); };

    const double ceiling = course::bench::read_kernel_gbs(n * sizeof(int));
    std::printf("ceiling: float4 read kernel %.0f GB/s\n", ceiling);
    auto cub_t = course::bench::time_device([&](cudaStream_t st) { cub(answer.get(), in.get(), n, st); }, s, 3, int(opt.repeats));
    verify("CUB DeviceReduce::Sum", n, read_answer(answer.get()), ref.sum(n));
    const double cub_gbs = gbs(cub_t.median_ms, n);
    rep.param("read_kernel_gbs", ceiling);
    rep.param("cub_reduce_gbs", cub_gbs);

    table prog("progression", "Reduction progression (" + std::to_string(n / mega) + "M ints, 4 B/element read)",
               {{"stage", 0}, {"threads", 0}, {"time_ms", 3}, {"GB/s", 0}, {"%read_ceiling", 1}, {"speedup", 2}, {"vs_CUB", 3}});
    double previous_ms = 0;
    const reduction::stage *book_best = nullptr, *fastest = nullptr;
    int book_best_threads = 0, fastest_threads = 0;
    double book_best_ms = 0;
    for (const auto &stage : course::registered<reduction::stage>()) {
      if (stage.info.todo) {
        prog.add_row({stage.info.id, std::string("TODO: not yet implemented"), {}, {}, {}, {}, {}});
        continue;
      }
      // The block size sweep, few repeats; then the best one timed properly.
      auto run = [&](int threads, bool block_vote) {
        reduction::config cfg;
        cfg.threads = threads;
        return [&stage, &in, &answer, &count, &ws, n, cfg, block_vote](cudaStream_t st) {
          if (stage.reduce) stage.reduce(answer.get(), in.get(), n, cfg, ws, st);
          else stage.count(count.get(), in.get(), n, 0, block_vote, cfg, ws, st);
        };
      };
      for (bool block_vote : stage.reduce ? std::vector<bool>{false} : std::vector<bool>{false, true}) {
        int best_threads = 0;
        double best_ms = 0;
        for (int t : {32, 64, 128, 256, 512, 1024}) {
          if (!reduction::supports(stage, t)) continue;
          auto tm = course::bench::time_device(run(t, block_vote), s, 1, 5);
          if (best_ms == 0 || tm.median_ms < best_ms) best_ms = tm.median_ms, best_threads = t;
        }
        auto tm = course::bench::time_device(run(best_threads, block_vote), s, 3, int(opt.repeats));
        CUDA_CHECK(cudaStreamSynchronize(s));
        std::string label = stage.info.id;
        if (stage.reduce) {
          verify(stage.info.id, n, read_answer(answer.get()), ref.sum(n));
          if (stage.info.id < "10" && (book_best_ms == 0 || tm.median_ms < book_best_ms))
            book_best = &stage, book_best_ms = tm.median_ms, book_best_threads = best_threads;
          if (stage.info.id >= "10") fastest = &stage, fastest_threads = best_threads;
        } else {
          label += block_vote ? " (count, __syncthreads_count)" : " (count, __ballot_sync)";
          verify(label, n, read_answer(count.get()), ref.count_positive());
        }
        prog.add_row({label, double(best_threads), tm.median_ms, gbs(tm.median_ms, n), 100 * gbs(tm.median_ms, n) / ceiling,
                      previous_ms ? cell(previous_ms / tm.median_ms) : cell(), cub_t.median_ms / tm.median_ms});
        if (stage.reduce) previous_ms = tm.median_ms;
      }
    }
    prog.add_row({std::string("CUB DeviceReduce::Sum"), std::string("library"), cub_t.median_ms, cub_gbs,
                  100 * cub_gbs / ceiling, {}, 1.0});
    prog.add_row({std::string("ceiling: float4 read kernel"), std::string("-"), {}, ceiling, 100.0, {}, {}});
    prog.set_plot(R"({"kind": "bars", "x": "stage", "y": "GB/s", "ceiling_from_row": "ceiling: float4 read kernel", "ceiling_label": "read ceiling"})");
    prog.print();
    rep.add(prog);

    // Part 2: throughput against n.
    std::string lines;  // the title names the lines drawn
    if (book_best) lines += book_best->info.id + " (the book's fastest), ";
    if (fastest && fastest != book_best) lines += fastest->info.id + ", ";
    table by_n("by_n", "GB/s against n: " + lines + "CUB",
               {{"n", 0}, {"series", 0}, {"time_us", 1}, {"GB/s", 1}});
    auto sweep = [&](const std::string &name, auto fn) {
      for (std::size_t m : sweep_sizes) {
        auto tm = course::bench::time_device([&](cudaStream_t st) { fn(m, st); }, s, 3, int(opt.repeats));
        CUDA_CHECK(cudaStreamSynchronize(s));
        verify(name, m, read_answer(answer.get()), ref.sum(m));
        by_n.add_row({double(m), name, 1000 * tm.median_ms, gbs(tm.median_ms, m)});
      }
    };
    auto stage_fn = [&](const reduction::stage *st, int threads) {
      reduction::config cfg;
      cfg.threads = threads;
      return [&, st, cfg](std::size_t m, cudaStream_t stream) { st->reduce(answer.get(), in.get(), m, cfg, ws, stream); };
    };
    if (book_best) sweep(book_best->info.id, stage_fn(book_best, book_best_threads));
    if (fastest) sweep(fastest->info.id, stage_fn(fastest, fastest_threads));
    sweep("CUB", [&](std::size_t m, cudaStream_t st) { cub(answer.get(), in.get(), m, st); });
    by_n.set_plot(R"({"kind": "lines", "x": "n", "y": "GB/s", "series": "series", "logx": true})");
    by_n.print();
    rep.add(by_n);

    // Part 3: the lab of figure 12.1, pairwise against interleaved.
    table lab("lab", "Lab, figure 12.1: pairwise against interleaved folding",
              {{"kernel", 0}, {"time_ms", 3}, {"rate", 1}, {"unit", 0}, {"vs_interleaved", 2}});
    {
      namespace L = reduction::lab;
      const std::size_t m = std::min<std::size_t>(n, std::size_t(1) << 20) / L::fold_threads * L::fold_threads;
      const int blocks = int(m / L::fold_threads), reps = 64;
      if (blocks > 0) {
        const long long tile_sum =
            reduction::host_sum<long long>(m, [](std::size_t i) { return (long long)course::random_int(seed, i, lo, hi); });
        const int want = reduction::wrap32(reps * tile_sum + (long long)m * reps * (reps - 1) / 2);
        double interleaved_ms = 0;
        for (L::fold f : {L::fold::interleaved, L::fold::pairwise_divergent, L::fold::pairwise_strided}) {
          auto tm = course::bench::time_device(
              [&](cudaStream_t st) { L::fold_many(f, answer.get(), in.get(), blocks, reps, st); }, s, 3, int(opt.repeats));
          CUDA_CHECK(cudaStreamSynchronize(s));
          verify(std::string("lab fold: ") + L::name(f), m, read_answer(answer.get()), want);
          if (f == L::fold::interleaved) interleaved_ms = tm.median_ms;
          lab.add_row({std::string("shared fold: ") + L::name(f), tm.median_ms, double(m) * reps / (tm.median_ms * 1e6),
                       std::string("Gvalues folded/s"), interleaved_ms / tm.median_ms});
        }
      }
      double grid_stride_ms = 0;
      for (bool contiguous : {false, true}) {
        auto tm = course::bench::time_device(
            [&](cudaStream_t st) {
              if (contiguous) L::sum_contiguous_runs(answer.get(), in.get(), n, st);
              else L::sum_grid_stride(answer.get(), in.get(), n, st);
            },
            s, 3, int(opt.repeats));
        CUDA_CHECK(cudaStreamSynchronize(s));
        const std::string label = contiguous ? "global reads: contiguous run per thread (pairwise)"
                                             : "global reads: grid-stride (interleaved)";
        verify(label, n, read_answer(answer.get()), ref.sum(n));
        if (!contiguous) grid_stride_ms = tm.median_ms;
        lab.add_row({label, tm.median_ms, gbs(tm.median_ms, n), std::string("GB/s"), grid_stride_ms / tm.median_ms});
      }
    }
    lab.print();
    rep.add(lab);

    return ok;
  });
}
