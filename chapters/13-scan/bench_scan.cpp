// SPDX-License-Identifier: BSD-3-Clause
// Chapter 13 benchmark: every scan stage, CUB's DeviceScan and DeviceSelect, in one run.
//
// Part 1 (--N Mints, default 256M): each scan stage's inclusive scan at its best block size out
// of 128..1024: Gelem/s, the book's global traffic per element (ints moved: 4 for scan-then-fan,
// 3 for reduce-then-scan, 2 for a single pass) and the ratio to CUB DeviceScan::InclusiveSum
// measured here. Goals (reported, not asserted): two-level >= 0.75x CUB, look-back >= 0.95x CUB.
// Part 2: compaction of the odd ints (stages 07 and 09), each at its best block size out of
// 128..1024, against CUB DeviceSelect::If (goal >= 0.9x). Both sides deliver the count to the host
// inside the timed call (the stages' calls return it).
// Part 2b: stream split, the odd ints first, then the others (stage 12, a stable partition),
// against CUB DevicePartition::If (which writes the others in reverse order and needs no count
// pass); the count copied to the host in every call, on both sides.
// Part 2c (issue 20, off the fast path): the best scan and compaction stages and CUB at an odd n
// (N - 3: not a multiple of any tile) and with the input one element (4 bytes) past a 16-byte
// boundary, each beside the aligned whole-tile figure, with its ratio to CUB in the same case.
// Part 3: stage 06's warp scans in isolation over 32-element segments, and their ratio to the
// conditional form (the book: the shuffle about 2x faster). Bound by memory: every form moves
// 8 bytes per element. Part 3b, the lab that can show the instruction counts: each segment
// scanned k times over per element loaded and stored (--k, default 64), in Gscans/s (element
// scans per second) and the ratio to the conditional form.
// Part 4: Gelem/s against n, 2^10 .. 2^28, for the two-level scan, the look-back scan and CUB.
// Part 5: segmented scan (stage 11, head flags) against CUB DeviceScan::InclusiveSumByKey on keys
// that alternate 0/1 from segment to segment (one byte per element on both sides), at two
// densities of heads.
// Every output is compared with the host's scan; a wrong one ends the program with status 1.
#include "cub_baseline.h"
#include "host_scan.h"
#include "scan.h"

#include "common/cli.h"
#include "common/device.h"
#include "common/random.h"
#include "common/random_fill.h"
#include "harness/bench.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using course::bench::cell;
using course::bench::table;

namespace {

constexpr std::size_t mega = std::size_t(1) << 20;
constexpr std::uint64_t seed = 13;
constexpr int lo = -1000, hi = 1000;

struct options_t {
  std::int64_t n_m = 256, repeats = 20, k = 64;
  std::string results = "results";
};

bool ok = true;

// got[0, m) == want[0, m), else a message and a failed run.
void verify(const std::string &who, const int *d_got, const int *want, std::size_t m) {
  std::vector<int> got(m);
  if (m) CUDA_CHECK(cudaMemcpy(got.data(), d_got, m * sizeof(int), cudaMemcpyDeviceToHost));
  const auto mismatch = std::mismatch(got.begin(), got.end(), want);
  if (mismatch.first == got.end()) return;
  const std::size_t i = std::size_t(mismatch.first - got.begin());
  std::fprintf(stderr, "WRONG RESULT: %s, n=%zu: first wrong [%zu]: expected %d, got %d\n", who.c_str(), m, i, want[i],
               got[i]);
  ok = false;
}

const scan::stage *find_stage(const char *prefix) {
  for (const auto &s : course::registered<scan::stage>())
    if (s.info.id.rfind(prefix, 0) == 0 && !s.info.todo) return &s;
  return nullptr;
}

}  // namespace

int main(int argc, char **argv) {
  options_t opt;
  course::options cli("bench_scan", "Chapter 13: scan, every stage against CUB.");
  cli.add("N", opt.n_m, 1, 1024, "ints to scan, in units of 2^20")
      .add("repeats", opt.repeats, 3, 1000, "timed repeats per measurement (the median is reported)")
      .add("k", opt.k, 1, 4096, "part 3b: warp scans per element in the compute-bound lab")
      .add("results", opt.results, "directory for the CSV and JSON results");
  cli.parse(argc, argv);
  return course::bench::run("bench_scan", "13-scan", "Chapter 13: scan", opt.results, [&](course::bench::report &rep) {

    std::size_t free_b = 0, total_b = 0;
    course::device_memory(free_b, total_b);
    std::size_t n = std::size_t(opt.n_m) * mega;
    const std::size_t fit = free_b / 100 * 30 / sizeof(int);  // input, output, CUB's temporaries
    if (n > fit) {
      n = fit / mega * mega;
      std::printf("note: --N %lldM does not fit; using %zuM ints\n", (long long)opt.n_m, n / mega);
    }
    rep.param("n", double(n));
    std::printf("\nScan of %zuM random ints in [%d, %d]\n", n / mega, lo, hi);

    std::vector<int> h_in(n), h_incl(n);
    course::fill_random_host(h_in.data(), n, seed, lo, hi);
    scan::host_inclusive_scan(h_incl.data(), h_in.data(), n);
    course::device_buffer<int> in(n), out(n);
    CUDA_CHECK(cudaMemcpy(in.get(), h_in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    course::device_buffer<unsigned> d_count(1);
    course::stream s;
    scan::workspace ws;
    scan::cub_baseline cub;
    auto gelems = [](double ms, std::size_t m) { return double(m) / (ms * 1e6); };
    auto clear = [&] { CUDA_CHECK(cudaMemset(out.get(), 0xFF, n * sizeof(int))); };
    // The block size out of 128..1024 at which run(threads) is fastest (five timed calls each).
    auto best_block_size = [&](auto run) {
      int best_threads = 0;
      double best_ms = 0;
      for (int t : {128, 256, 512, 1024}) {
        auto tm = course::bench::time_device(run(t), s, 1, 5);
        if (best_ms == 0 || tm.median_ms < best_ms) best_ms = tm.median_ms, best_threads = t;
      }
      return best_threads;
    };

    // --- Part 1: the progression ---------------------------------------------------------------
    clear();
    auto cub_t = course::bench::time_device([&](cudaStream_t st) { cub.inclusive_sum(out.get(), in.get(), n, st); }, s,
                                            3, int(opt.repeats));
    CUDA_CHECK(cudaStreamSynchronize(s));
    verify("CUB DeviceScan::InclusiveSum", out.get(), h_incl.data(), n);
    rep.param("cub_scan_gelems", gelems(cub_t.median_ms, n));

    table prog("progression", "Inclusive scan progression (" + std::to_string(n / mega) + "M ints)",
               {{"stage", 0}, {"threads", 0}, {"traffic_per_elem", 0}, {"time_ms", 3}, {"Gelem/s", 1}, {"vs_CUB", 3}});
    for (const auto &stage : course::registered<scan::stage>()) {
      if (!stage.scan) continue;
      if (stage.info.todo) {
        prog.add_row({stage.info.id, std::string("TODO: not yet implemented"), {}, {}, {}, {}});
        continue;
      }
      auto run = [&](int threads) {
        scan::config cfg;
        cfg.threads = threads;
        return [&stage, &in, &out, &ws, n, cfg](cudaStream_t st) { stage.scan(out.get(), in.get(), n, true, cfg, ws, st); };
      };
      const int best_threads = best_block_size(run);
      clear();
      auto tm = course::bench::time_device(run(best_threads), s, 3, int(opt.repeats));
      CUDA_CHECK(cudaStreamSynchronize(s));
      verify(stage.info.id, out.get(), h_incl.data(), n);
      prog.add_row({stage.info.id, double(best_threads), std::to_string(stage.traffic) + "N", tm.median_ms,
                    gelems(tm.median_ms, n), cub_t.median_ms / tm.median_ms});
    }
    prog.add_row({std::string("CUB DeviceScan::InclusiveSum"), std::string("library"), std::string("2N"), cub_t.median_ms,
                  gelems(cub_t.median_ms, n), 1.0});
    prog.set_plot(R"({"kind": "bars", "x": "stage", "y": "Gelem/s"})");
    prog.print();
    std::printf("goals (reported, not asserted): 05_vector_io >= 0.75x CUB, 08_decoupled_lookback >= 0.95x CUB\n");
    rep.add(prog);

    // --- Part 2: compaction of the odd ints -------------------------------------------------------
    std::vector<int> h_odd;
    for (int x : h_in)
      if (x & 1) h_odd.push_back(x);
    table compact("compaction", "Stream compaction, keep the odd ints (" + std::to_string(n / mega) +
                                    "M ints; the count copied to the host in every call)",
                  {{"series", 0}, {"threads", 0}, {"time_ms", 3}, {"Gelem/s", 1}, {"vs_CUB", 3}});
    clear();
    unsigned cub_count = 0;
    auto cub_sel = course::bench::time_device(
        [&](cudaStream_t st) {
          cub.select_odd(out.get(), d_count.get(), in.get(), n, st);
          CUDA_CHECK(cudaMemcpyAsync(&cub_count, d_count.get(), sizeof(unsigned), cudaMemcpyDeviceToHost, st));
          CUDA_CHECK(cudaStreamSynchronize(st));
        },
        s, 3, int(opt.repeats));
    if (cub_count != h_odd.size()) {
      std::fprintf(stderr, "WRONG RESULT: CUB DeviceSelect::If count %u, expected %zu\n", cub_count, h_odd.size());
      ok = false;
    }
    verify("CUB DeviceSelect::If", out.get(), h_odd.data(), h_odd.size());
    for (const auto &stage : course::registered<scan::stage>()) {
      if (!stage.compact) continue;
      const scan::stage *st = &stage;
      if (st->info.todo) {
        compact.add_row({st->info.id, std::string("TODO: not yet implemented"), {}, {}, {}});
        continue;
      }
      std::size_t count = 0;
      // The stage's call waits for its count: the event timing includes that copy and wait.
      auto run = [&](int threads) {
        scan::config cfg;
        cfg.threads = threads;
        return [&, cfg](cudaStream_t stream) {
          count = st->compact(out.get(), in.get(), n, scan::predicate::odd, cfg, ws, stream);
        };
      };
      const int best_threads = best_block_size(run);
      clear();
      auto tm = course::bench::time_device(run(best_threads), s, 3, int(opt.repeats));
      if (count != h_odd.size()) {
        std::fprintf(stderr, "WRONG RESULT: %s count %zu, expected %zu\n", st->info.id.c_str(), count, h_odd.size());
        ok = false;
      }
      verify(st->info.id, out.get(), h_odd.data(), h_odd.size());
      compact.add_row({st->info.id, double(best_threads), tm.median_ms, gelems(tm.median_ms, n),
                       cub_sel.median_ms / tm.median_ms});
    }
    compact.add_row({std::string("CUB DeviceSelect::If"), std::string("library"), cub_sel.median_ms,
                     gelems(cub_sel.median_ms, n), 1.0});
    compact.set_plot(R"({"kind": "bars", "x": "series", "y": "Gelem/s"})");
    compact.print();
    std::printf("goal (reported, not asserted): compaction (09_compact_lookback) >= 0.9x CUB\n");
    rep.add(compact);

    // --- Part 2b: stream split (a stable partition) -----------------------------------------------
    {
      std::vector<int> h_split(n);
      const std::size_t h_kept = scan::host_split(h_split.data(), h_in.data(), n, [](int x) { return (x & 1) != 0; });
      // got[0, kept) == h_split's kept; the others in order, or (CUB) in reverse order.
      auto verify_split = [&](const std::string &who, std::size_t count, bool rest_reversed) {
        if (count != h_kept) {
          std::fprintf(stderr, "WRONG RESULT: %s count %zu, expected %zu\n", who.c_str(), count, h_kept);
          ok = false;
          return;
        }
        std::vector<int> got(n);
        CUDA_CHECK(cudaMemcpy(got.data(), out.get(), n * sizeof(int), cudaMemcpyDeviceToHost));
        if (rest_reversed) std::reverse(got.begin() + std::ptrdiff_t(h_kept), got.end());
        const auto mismatch = std::mismatch(got.begin(), got.end(), h_split.begin());
        if (mismatch.first != got.end()) {
          const std::size_t i = std::size_t(mismatch.first - got.begin());
          std::fprintf(stderr, "WRONG RESULT: %s, n=%zu: first wrong [%zu]%s: expected %d, got %d\n", who.c_str(), n, i,
                       rest_reversed ? " (the others reversed)" : "", h_split[i], got[i]);
          ok = false;
        }
      };
      table split("split", "Stream split, the odd ints first, then the others (" + std::to_string(n / mega) +
                               "M ints; the count copied to the host in every call)",
                  {{"series", 0}, {"threads", 0}, {"time_ms", 3}, {"Gelem/s", 1}, {"vs_CUB", 3}});
      clear();
      unsigned cub_kept = 0;
      auto cub_part = course::bench::time_device(
          [&](cudaStream_t st) {
            cub.partition_odd(out.get(), d_count.get(), in.get(), n, st);
            CUDA_CHECK(cudaMemcpyAsync(&cub_kept, d_count.get(), sizeof(unsigned), cudaMemcpyDeviceToHost, st));
            CUDA_CHECK(cudaStreamSynchronize(st));
          },
          s, 3, int(opt.repeats));
      verify_split("CUB DevicePartition::If", cub_kept, true);
      for (const auto &stage : course::registered<scan::stage>()) {
        if (!stage.split) continue;
        const scan::stage *st = &stage;
        if (st->info.todo) {
          split.add_row({st->info.id, std::string("TODO: not yet implemented"), {}, {}, {}});
          continue;
        }
        std::size_t count = 0;
        auto run = [&](int threads) {
          scan::config cfg;
          cfg.threads = threads;
          return [&, cfg](cudaStream_t stream) {
            count = st->split(out.get(), in.get(), n, scan::predicate::odd, cfg, ws, stream);
          };
        };
        const int best_threads = best_block_size(run);
        clear();
        auto tm = course::bench::time_device(run(best_threads), s, 3, int(opt.repeats));
        verify_split(st->info.id, count, false);
        split.add_row({st->info.id, double(best_threads), tm.median_ms, gelems(tm.median_ms, n),
                       cub_part.median_ms / tm.median_ms});
      }
      split.add_row({std::string("CUB DevicePartition::If (others reversed)"), std::string("library"),
                     cub_part.median_ms, gelems(cub_part.median_ms, n), 1.0});
      split.set_plot(R"({"kind": "bars", "x": "series", "y": "Gelem/s"})");
      split.print();
      rep.add(split);
    }

    // --- Part 2c: off the fast path: odd n, input offset by one element (issue 20) ----------------
    {
      const std::size_t n_odd = n - 3;  // N is a multiple of 2^20: N - 3 is a multiple of no tile
      // The inclusive scan of in[1, 1 + n_odd): h_incl shifted by one, less in[0].
      std::vector<int> h_incl_off(n_odd);
      for (std::size_t i = 0; i < n_odd; ++i) h_incl_off[i] = scan::wrap_add(h_incl[i + 1], -h_in[0]);
      std::vector<int> h_odd_n, h_odd_off;  // the odd ints of in[0, n_odd) and of in[1, 1 + n_odd)
      for (std::size_t i = 0; i < n_odd + 1; ++i) {
        if (!(h_in[i] & 1)) continue;
        if (i < n_odd) h_odd_n.push_back(h_in[i]);
        if (i >= 1) h_odd_off.push_back(h_in[i]);
      }
      struct fast_path_case {
        const char *name;
        std::size_t m, offset;
        const int *incl, *odd;
        std::size_t odd_count;
      };
      const fast_path_case cases[] = {
          {"aligned, N", n, 0, h_incl.data(), h_odd.data(), h_odd.size()},
          {"aligned, odd n = N - 3", n_odd, 0, h_incl.data(), h_odd_n.data(), h_odd_n.size()},
          {"input + 1 element, n = N - 3", n_odd, 1, h_incl_off.data(), h_odd_off.data(), h_odd_off.size()},
      };
      table off("off_fast_path",
                "Off the fast path (issue 20): odd n and a misaligned input (output aligned), ratio to CUB in "
                "the same case",
                {{"series", 0}, {"case", 0}, {"threads", 0}, {"time_ms", 3}, {"Gelem/s", 1}, {"vs_CUB", 3}});
      for (const auto &c : cases) {
        const int *src = in.get() + c.offset;
        // The scan: CUB, then stages 05 and 08 at their best block sizes for this case.
        clear();
        auto cub_scan = course::bench::time_device([&](cudaStream_t st) { cub.inclusive_sum(out.get(), src, c.m, st); },
                                                   s, 3, int(opt.repeats));
        CUDA_CHECK(cudaStreamSynchronize(s));
        verify(std::string("CUB DeviceScan::InclusiveSum, ") + c.name, out.get(), c.incl, c.m);
        for (const char *id : {"05", "08"}) {
          const scan::stage *st = find_stage(id);
          if (!st || !st->scan) continue;
          auto run = [&, st](int threads) {
            scan::config cfg;
            cfg.threads = threads;
            return [&, st, cfg](cudaStream_t stream) { st->scan(out.get(), src, c.m, true, cfg, ws, stream); };
          };
          const int best_threads = best_block_size(run);
          clear();
          auto tm = course::bench::time_device(run(best_threads), s, 3, int(opt.repeats));
          CUDA_CHECK(cudaStreamSynchronize(s));
          verify(st->info.id + ", " + c.name, out.get(), c.incl, c.m);
          off.add_row({st->info.id, std::string(c.name), double(best_threads), tm.median_ms, gelems(tm.median_ms, c.m),
                       cub_scan.median_ms / tm.median_ms});
        }
        off.add_row({std::string("CUB DeviceScan::InclusiveSum"), std::string(c.name), std::string("library"),
                     cub_scan.median_ms, gelems(cub_scan.median_ms, c.m), 1.0});
        // The compaction: CUB, then stages 07 and 09.
        clear();
        unsigned cub_n = 0;
        auto cub_c = course::bench::time_device(
            [&](cudaStream_t st) {
              cub.select_odd(out.get(), d_count.get(), src, c.m, st);
              CUDA_CHECK(cudaMemcpyAsync(&cub_n, d_count.get(), sizeof(unsigned), cudaMemcpyDeviceToHost, st));
              CUDA_CHECK(cudaStreamSynchronize(st));
            },
            s, 3, int(opt.repeats));
        if (cub_n != c.odd_count) {
          std::fprintf(stderr, "WRONG RESULT: CUB DeviceSelect::If, %s: count %u, expected %zu\n", c.name, cub_n,
                       c.odd_count);
          ok = false;
        }
        verify(std::string("CUB DeviceSelect::If, ") + c.name, out.get(), c.odd, c.odd_count);
        for (const char *id : {"07", "09"}) {
          const scan::stage *st = find_stage(id);
          if (!st || !st->compact) continue;
          std::size_t count = 0;
          auto run = [&, st](int threads) {
            scan::config cfg;
            cfg.threads = threads;
            return [&, st, cfg](cudaStream_t stream) {
              count = st->compact(out.get(), src, c.m, scan::predicate::odd, cfg, ws, stream);
            };
          };
          const int best_threads = best_block_size(run);
          clear();
          auto tm = course::bench::time_device(run(best_threads), s, 3, int(opt.repeats));
          if (count != c.odd_count) {
            std::fprintf(stderr, "WRONG RESULT: %s, %s: count %zu, expected %zu\n", st->info.id.c_str(), c.name, count,
                         c.odd_count);
            ok = false;
          }
          verify(st->info.id + ", " + c.name, out.get(), c.odd, c.odd_count);
          off.add_row({st->info.id, std::string(c.name), double(best_threads), tm.median_ms, gelems(tm.median_ms, c.m),
                       cub_c.median_ms / tm.median_ms});
        }
        off.add_row({std::string("CUB DeviceSelect::If"), std::string(c.name), std::string("library"), cub_c.median_ms,
                     gelems(cub_c.median_ms, c.m), 1.0});
      }
      off.print();
      std::printf("goal (issue 20, reported, not asserted): 08_decoupled_lookback >= 1.00x CUB at N and at the odd n\n");
      rep.add(off);
    }

    // --- Part 3: the warp scans in isolation -----------------------------------------------------
    if (const scan::stage *st = find_stage("06"); st && st->warp_scan) {
      std::vector<int> h_seg(n);
      for (std::size_t b = 0; b < n; b += 32)
        scan::host_inclusive_scan(h_seg.data() + b, h_in.data() + b, std::min<std::size_t>(32, n - b));
      table warps("warp_scans", "Warp scans over 32-element segments (" + std::to_string(n / mega) + "M ints)",
                  {{"form", 0}, {"time_ms", 3}, {"Gelem/s", 1}, {"vs_conditional", 2}});
      double conditional_ms = 0;
      for (scan::warp_form form : scan::all_warp_forms) {
        clear();
        auto tm = course::bench::time_device([&](cudaStream_t stream) { st->warp_scan(out.get(), in.get(), n, form, true, stream); },
                                             s, 3, int(opt.repeats));
        CUDA_CHECK(cudaStreamSynchronize(s));
        verify(std::string("warp scan ") + scan::to_string(form), out.get(), h_seg.data(), n);
        if (form == scan::warp_form::conditional) conditional_ms = tm.median_ms;
        warps.add_row({std::string(scan::to_string(form)), tm.median_ms, gelems(tm.median_ms, n),
                       conditional_ms / tm.median_ms});
      }
      warps.set_plot(R"({"kind": "bars", "x": "form", "y": "Gelem/s"})");
      warps.print();
      rep.add(warps);
    }

    // --- Part 3b: the warp scans where their instructions matter (compute-bound lab) -------------
    if (const scan::stage *st = find_stage("06"); st && st->warp_scan_lab) {
      const unsigned k = unsigned(opt.k);
      const std::size_t m = std::min<std::size_t>(n, 64 * mega);
      std::vector<int> h_rep(h_in.begin(), h_in.begin() + std::ptrdiff_t(m));
      for (unsigned r = 0; r < k; ++r)
        for (std::size_t b = 0; b < m; b += 32)
          scan::host_inclusive_scan(h_rep.data() + b, h_rep.data() + b, std::min<std::size_t>(32, m - b));
      table lab("warp_scan_lab", "Warp scans, compute-bound: each 32-element segment scanned " + std::to_string(k) +
                                     " times per load (" + std::to_string(m / mega) + "M ints)",
                {{"form", 0}, {"k", 0}, {"time_ms", 3}, {"Gscans/s", 1}, {"vs_conditional", 2}});
      double conditional_ms = 0;
      for (scan::warp_form form : scan::all_warp_forms) {
        clear();
        auto tm = course::bench::time_device(
            [&](cudaStream_t stream) { st->warp_scan_lab(out.get(), in.get(), m, form, k, stream); }, s, 3,
            int(opt.repeats));
        CUDA_CHECK(cudaStreamSynchronize(s));
        verify(std::string("warp scan lab ") + scan::to_string(form), out.get(), h_rep.data(), m);
        if (form == scan::warp_form::conditional) conditional_ms = tm.median_ms;
        lab.add_row({std::string(scan::to_string(form)), double(k), tm.median_ms, gelems(tm.median_ms, m) * k,
                     conditional_ms / tm.median_ms});
      }
      lab.set_plot(R"({"kind": "bars", "x": "form", "y": "Gscans/s"})");
      lab.print();
      rep.add(lab);
    }

    // --- Part 4: throughput against n ------------------------------------------------------------
    table by_n("by_n", "Gelem/s against n: two-level, decoupled look-back and CUB",
               {{"n", 0}, {"series", 0}, {"time_us", 1}, {"Gelem/s", 2}});
    auto sweep = [&](const std::string &name, auto fn) {
      for (int e = 10; e <= 28; e += 2) {
        const std::size_t m = std::size_t(1) << e;
        if (m > n) break;
        auto tm = course::bench::time_device([&](cudaStream_t st) { fn(m, st); }, s, 3, int(opt.repeats));
        CUDA_CHECK(cudaStreamSynchronize(s));
        verify(name, out.get(), h_incl.data(), m);  // the scan of a prefix is the prefix of the scan
        by_n.add_row({double(m), name, 1000 * tm.median_ms, gelems(tm.median_ms, m)});
      }
    };
    for (const char *id : {"05", "08"}) {
      if (const scan::stage *st = find_stage(id)) {
        scan::config cfg;
        sweep(st->info.id, [&, st, cfg](std::size_t m, cudaStream_t stream) {
          st->scan(out.get(), in.get(), m, true, cfg, ws, stream);
        });
      }
    }
    sweep("CUB", [&](std::size_t m, cudaStream_t st) { cub.inclusive_sum(out.get(), in.get(), m, st); });
    by_n.set_plot(R"({"kind": "lines", "x": "n", "y": "Gelem/s", "series": "series", "logx": true})");
    by_n.print();
    rep.add(by_n);

    // --- Part 5: segmented scan ------------------------------------------------------------------
    if (n <= 0xffffffffu) {
      table seg("segmented", "Segmented inclusive scan, head flags (" + std::to_string(n / mega) +
                                 "M ints, one flag byte each), against CUB InclusiveSumByKey",
                {{"series", 0}, {"heads", 0}, {"threads", 0}, {"time_ms", 3}, {"Gelem/s", 1}, {"vs_CUB", 3}});
      course::device_buffer<std::uint8_t> d_heads(n), d_keys(n);
      for (int one_in : {1000, 8}) {
        // Random heads, one in `one_in` on average; the keys alternate 0/1 from segment to segment.
        std::vector<std::uint8_t> h_heads(n), h_keys(n);
        std::uint8_t key = 0;
        for (std::size_t i = 0; i < n; ++i) {
          h_heads[i] = course::random_int(seed + 1, i, 0, one_in - 1) == 0;
          if (h_heads[i] && i > 0) key ^= 1;
          h_keys[i] = key;
        }
        std::vector<int> h_seg(n);
        scan::host_segmented_scan(h_seg.data(), h_in.data(), h_heads.data(), n, true);
        CUDA_CHECK(cudaMemcpy(d_heads.get(), h_heads.data(), n, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(d_keys.get(), h_keys.data(), n, cudaMemcpyHostToDevice));
        const std::string density = "1 in " + std::to_string(one_in);
        clear();
        auto cub_k = course::bench::time_device(
            [&](cudaStream_t st) { cub.inclusive_sum_by_key(out.get(), in.get(), d_keys.get(), n, st); }, s, 3,
            int(opt.repeats));
        CUDA_CHECK(cudaStreamSynchronize(s));
        verify("CUB InclusiveSumByKey, heads " + density, out.get(), h_seg.data(), n);
        for (const auto &stage : course::registered<scan::stage>()) {
          if (!stage.segmented_scan) continue;
          const scan::stage *st = &stage;
          if (st->info.todo) {
            seg.add_row({st->info.id, density, std::string("TODO: not yet implemented"), {}, {}, {}});
            continue;
          }
          auto run = [&, st](int threads) {
            scan::config cfg;
            cfg.threads = threads;
            return [&, st, cfg](cudaStream_t stream) {
              st->segmented_scan(out.get(), in.get(), d_heads.get(), n, true, cfg, ws, stream);
            };
          };
          const int best_threads = best_block_size(run);
          clear();
          auto tm = course::bench::time_device(run(best_threads), s, 3, int(opt.repeats));
          CUDA_CHECK(cudaStreamSynchronize(s));
          verify(st->info.id + ", heads " + density, out.get(), h_seg.data(), n);
          seg.add_row({st->info.id, density, double(best_threads), tm.median_ms, gelems(tm.median_ms, n),
                       cub_k.median_ms / tm.median_ms});
        }
        seg.add_row({std::string("CUB InclusiveSumByKey"), density, std::string("library"), cub_k.median_ms,
                     gelems(cub_k.median_ms, n), 1.0});
      }
      seg.print();
      rep.add(seg);
    }

    return ok;
  });
}
