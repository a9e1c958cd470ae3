// SPDX-License-Identifier: BSD-3-Clause
// The speed verdict's workload for chapter 13 (harness/judge.h): one stage's call on n random ints
// in [-1000, 1000] (floats in [-1, 1) with type=float), out of place, as the benchmark calls it
// (at the workload's n = 2^28, 1 GB read and up to 1 GB written per call, far past the H200's 60 MB
// L2), its workspace allocated once. Every kind of entry point a stage registers:
//   scan (02-06, 08, 10)   n, threads, type = int | float, inclusive (1), partials (the two-level
//                          stages' config::partials, 0: as many as the GPU holds at once)
//   stage 06               also entry = scan | warp_scan | warp_scan_lab: its warp scans over
//                          32-element segments (memory-bound) or each segment scanned k times per
//                          load (the compute-bound lab; k, default 64; n from lessons.toml), in one
//                          form or several:
//                          form = conditional | zero_padded | templated | shuffle | shuffle_ptx,
//                          shuffles (the two register forms one after the other, the default) or
//                          all (the five); the warp scans run 256 threads per block, whatever
//                          threads
//   compaction (07, 09)    n, threads, predicate = odd | even | positive | all | none (odd); the
//   call split (12)             copies the count home and waits for it, so it is timed by the host
//   clock segmented scan (11)    n, threads, inclusive, heads (one head flag in `heads` elements on
//                          average, at random; default 1000)
#include "scan.h"

#include "common/memory.h"
#include "common/parallel.h"
#include "common/random.h"
#include "common/random_fill.h"
#include "harness/judge.h"

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

using course::judge::params;
using course::judge::workload;

namespace {

constexpr std::uint64_t seed = 13;
constexpr int lo = -1000, hi = 1000;

scan::config config_of(const params &p) {
  scan::config cfg;
  cfg.threads = int(p.integer("threads", cfg.threads));
  cfg.partials = int(p.integer("partials", cfg.partials));
  if (!scan::supports_threads(cfg.threads))
    throw std::invalid_argument("threads=" + std::to_string(cfg.threads) +
                                ": scan stages take a power of two in 32..1024");
  return cfg;
}

std::string threads_text(const scan::config &cfg) {
  return std::to_string(cfg.threads) + " threads" +
         (cfg.partials ? ", " + std::to_string(cfg.partials) + " partials" : std::string());
}

// An input of random values and an output of the same size.
template <class T>
struct arrays {
  course::device_buffer<T> in, out;
  scan::workspace ws;
  explicit arrays(std::size_t n) : in(n), out(n) {
    if constexpr (std::is_same_v<T, float>) course::fill_random_device(in.get(), n, seed);
    else course::fill_random_device(in.get(), n, seed, lo, hi);
  }
};

template <class T>
workload scan_workload(scan::scan_fn_of<T> fn, const params &p, std::size_t n, const char *type) {
  const scan::config cfg = config_of(p);
  const bool inclusive = p.integer("inclusive", 1) != 0;
  auto a = std::make_shared<arrays<T>>(n);
  workload w;
  w.description = std::string(inclusive ? "inclusive" : "exclusive") +
                  " scan, n = " + std::to_string(n) + " " + type + ", " + threads_text(cfg);
  w.call = [fn, a, n, inclusive, cfg](cudaStream_t s) {
    fn(a->out.get(), a->in.get(), n, inclusive, cfg, a->ws, s);
  };
  w.keep = a;
  return w;
}

// Stage 06's warp scans: the forms named by `form`, one after the other in each call.
std::vector<scan::warp_form> forms_of(const std::string &form) {
  using F = scan::warp_form;
  if (form == "conditional") return {F::conditional};
  if (form == "zero_padded") return {F::zero_padded};
  if (form == "templated") return {F::templated};
  if (form == "shuffle") return {F::shuffle};
  if (form == "shuffle_ptx") return {F::shuffle_ptx};
  if (form == "shuffles") return {F::shuffle, F::shuffle_ptx};
  if (form == "all") return {std::begin(scan::all_warp_forms), std::end(scan::all_warp_forms)};
  throw std::invalid_argument(
      "form=" + form +
      " is none of conditional, zero_padded, templated, shuffle, shuffle_ptx, shuffles, all");
}

workload warp_workload(const scan::stage &st, const params &p, std::size_t n, bool lab) {
  const std::vector<scan::warp_form> forms = forms_of(p.text("form", "shuffles"));
  const std::int64_t k_param = p.integer("k", 64);
  if (lab && (k_param < 1 || k_param > 1 << 20))
    throw std::invalid_argument("k must be in 1..2^20");
  const auto k = unsigned(k_param);
  auto a = std::make_shared<arrays<int>>(n);
  workload w;
  std::string names;
  for (scan::warp_form f : forms)
    names += (names.empty() ? "" : " then ") + std::string(scan::to_string(f));
  w.description = std::string(lab ? "warp scan lab, each 32-element segment scanned " +
                                        std::to_string(k) + " times"
                                  : "warp scans over 32-element segments") +
                  ", n = " + std::to_string(n) + " ints: " + names;
  if (lab) {
    w.call = [&st, a, n, forms, k](cudaStream_t s) {
      for (scan::warp_form f : forms) st.warp_scan_lab(a->out.get(), a->in.get(), n, f, k, s);
    };
  } else {
    w.call = [&st, a, n, forms](cudaStream_t s) {
      for (scan::warp_form f : forms) st.warp_scan(a->out.get(), a->in.get(), n, f, true, s);
    };
  }
  w.keep = a;
  return w;
}

scan::predicate predicate_of(const std::string &name) {
  using P = scan::predicate;
  for (P p : {P::odd, P::even, P::positive, P::all, P::none})
    if (name == scan::to_string(p)) return p;
  throw std::invalid_argument("predicate=" + name + " is none of odd, even, positive, all, none");
}

// Compaction (keep) or split (keep first, then the others): the call returns the count, waiting for
// it.
workload select_workload(scan::compact_fn fn, const params &p, std::size_t n, const char *what) {
  const scan::config cfg = config_of(p);
  const std::string pred = p.text("predicate", "odd");
  const scan::predicate keep = predicate_of(pred);
  auto a = std::make_shared<arrays<int>>(n);
  workload w;
  w.description = std::string(what) + ", keep the " + pred + " ints, n = " + std::to_string(n) +
                  " ints, " + threads_text(cfg) + ", the count copied home in every call";
  w.host_timed = true;
  w.call = [fn, a, n, keep, cfg](cudaStream_t s) {
    fn(a->out.get(), a->in.get(), n, keep, cfg, a->ws, s);
  };
  w.keep = a;
  return w;
}

workload segmented_workload(scan::segmented_scan_fn fn, const params &p, std::size_t n) {
  const scan::config cfg = config_of(p);
  const bool inclusive = p.integer("inclusive", 1) != 0;
  const std::int64_t one_in = p.integer("heads", 1000);
  if (one_in < 1 || one_in > 0x7fffffff) throw std::invalid_argument("heads must be in 1..2^31-1");
  struct buffers : arrays<int> {
    course::device_buffer<std::uint8_t> heads;
    explicit buffers(std::size_t n) : arrays<int>(n), heads(n) {}
  };
  auto b = std::make_shared<buffers>(n);
  {  // random head flags, one in one_in on average, made on the host's cores and copied once
    std::vector<std::uint8_t> h(n);
    const auto last = std::int32_t(one_in - 1);
    course::parallel_for(n, [&](std::size_t begin, std::size_t end, unsigned) {
      for (std::size_t i = begin; i < end; ++i)
        h[i] = course::random_int(seed + 1, i, 0, last) == 0;
    });
    CUDA_CHECK(cudaMemcpy(b->heads.get(), h.data(), n, cudaMemcpyHostToDevice));
  }
  workload w;
  w.description = std::string(inclusive ? "inclusive" : "exclusive") +
                  " segmented scan, n = " + std::to_string(n) + " ints, a head in " +
                  std::to_string(one_in) + " on average, " + threads_text(cfg);
  w.call = [fn, b, n, inclusive, cfg](cudaStream_t s) {
    fn(b->out.get(), b->in.get(), b->heads.get(), n, inclusive, cfg, b->ws, s);
  };
  w.keep = b;
  return w;
}

}  // namespace

workload course::judge::make_workload(const params &p) {
  const auto *st = linked_stage<scan::stage>();
  if (!st) throw std::logic_error("no chapter-13 stage is linked into this judge program");
  const std::string entry = p.text("entry", "scan");
  // The lab does k scans per element: 2^26 elements (the benchmark's) take milliseconds already.
  const std::int64_t n_param =
      entry == "warp_scan_lab" ? p.integer("n") : p.integer("n", COURSE_WORKLOAD_N);
  if (n_param < 1) throw std::invalid_argument("n must be at least 1");
  const auto n = std::size_t(n_param);
  if (entry != "scan" && entry != "warp_scan" && entry != "warp_scan_lab")
    throw std::invalid_argument("entry=" + entry + " is none of scan, warp_scan, warp_scan_lab");
  if (entry == "warp_scan" || entry == "warp_scan_lab") {
    if (!(entry == "warp_scan" ? st->warp_scan != nullptr : st->warp_scan_lab != nullptr))
      throw std::invalid_argument("entry=" + entry + ": only stage 06 has warp scans of its own");
    return warp_workload(*st, p, n, entry == "warp_scan_lab");
  }
  if (st->scan) {
    const std::string type = p.text("type", "int");
    if (type == "int") return scan_workload<int>(st->scan, p, n, "ints");
    if (type == "float") return scan_workload<float>(st->scan_float, p, n, "floats");
    throw std::invalid_argument("type=" + type + " is none of int, float");
  }
  if (st->compact) return select_workload(st->compact, p, n, "compaction");
  if (st->split) return select_workload(st->split, p, n, "split (stable partition)");
  if (st->segmented_scan) return segmented_workload(st->segmented_scan, p, n);
  throw std::logic_error(st->info.id + " registers no entry point this judge knows");
}
