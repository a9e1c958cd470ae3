// SPDX-License-Identifier: BSD-3-Clause
// The speed verdict's workload for chapter 12 (harness/judge.h): one stage's reduction of n random
// ints in [-1000, 1000], as the benchmark calls it (at the workload's n = 2^28, 1 GB read per call,
// about seventeen times the H200's 60 MB L2), its workspace allocated once.
// Parameters: n, threads, blocks (config::blocks, 0: the stage's own grid); stage 07 also takes
// op = int | long_long | double | moments | min_max (its typed entry points; double and moments
// read floats in [-1, 1)); stage 08 (it counts in[i] > threshold) takes threshold (0) and
// vote = ballot | block | both (both: the two kernels one after the other, the block vote with
// block_threads, default threads).
#include "reduction.h"

#include "common/memory.h"
#include "common/random_fill.h"
#include "harness/judge.h"

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

using course::judge::params;
using course::judge::workload;

namespace {

constexpr std::uint64_t seed = 12;
constexpr int lo = -1000, hi = 1000;

reduction::config config_of(const params &p, const std::string &threads_key = "threads") {
  reduction::config cfg;
  cfg.threads = int(p.integer(threads_key, p.integer("threads", cfg.threads)));
  cfg.blocks = int(p.integer("blocks", cfg.blocks));
  return cfg;
}

void require(const reduction::stage &st, const reduction::config &cfg) {
  if (!reduction::supports(st, cfg.threads))
    throw std::invalid_argument(st.info.id + " does not run with " + std::to_string(cfg.threads) +
                                " threads per block");
}

// The input (ints, or floats for the typed stage's float entry points), the answer, the workspace.
struct buffers {
  course::device_buffer<int> ints;
  course::device_buffer<float> floats;
  course::device_buffer<unsigned char> answer{
      64};  // room for any answer type (cudaMalloc aligns to 256)
  reduction::workspace ws;
  buffers(std::size_t n, bool want_floats) {
    if (want_floats) {
      floats = course::device_buffer<float>(n);
      course::fill_random_device(floats.get(), n, seed);
    } else {
      ints = course::device_buffer<int>(n);
      course::fill_random_device(ints.get(), n, seed, lo, hi);
    }
  }
  template <class T>
  T *answer_as() const {
    return reinterpret_cast<T *>(answer.get());
  }
};

std::string sizes_text(std::size_t n, const char *what, const reduction::config &cfg) {
  return "n = " + std::to_string(n) + " " + what + ", " + std::to_string(cfg.threads) + " threads" +
         (cfg.blocks ? ", " + std::to_string(cfg.blocks) + " blocks" : std::string());
}

workload sum_workload(const reduction::stage &st, const params &p, std::size_t n) {
  const reduction::config cfg = config_of(p);
  require(st, cfg);
  const std::string op = p.text("op", "int");
  if (op != "int" && !st.typed)
    throw std::invalid_argument("op=" + op + ": only stage 07 has typed entry points");
  const bool floats = op == "double" || op == "moments";
  auto b = std::make_shared<buffers>(n, floats);
  workload w;
  w.keep = b;
  w.description =
      sizes_text(n, floats ? "floats" : "ints", cfg) + (st.typed ? ", op " + op : std::string());
  const reduction::typed_entry_points *t = st.typed;
  if (op == "int") {
    w.call = [&st, b, n, cfg](cudaStream_t s) {
      st.reduce(b->answer_as<int>(), b->ints.get(), n, cfg, b->ws, s);
    };
  } else if (op == "long_long") {
    w.call = [t, b, n, cfg](cudaStream_t s) {
      t->sum_ll(b->answer_as<long long>(), b->ints.get(), n, cfg, b->ws, s);
    };
  } else if (op == "double") {
    w.call = [t, b, n, cfg](cudaStream_t s) {
      t->sum_double(b->answer_as<double>(), b->floats.get(), n, cfg, b->ws, s);
    };
  } else if (op == "moments") {
    w.call = [t, b, n, cfg](cudaStream_t s) {
      t->sum_squares(b->answer_as<reduction::moments>(), b->floats.get(), n, cfg, b->ws, s);
    };
  } else if (op == "min_max") {
    w.call = [t, b, n, cfg](cudaStream_t s) {
      t->min_max(b->answer_as<reduction::int_range>(), b->ints.get(), n, cfg, b->ws, s);
    };
  } else {
    throw std::invalid_argument("op=" + op +
                                " is none of int, long_long, double, moments, min_max");
  }
  return w;
}

workload count_workload(const reduction::stage &st, const params &p, std::size_t n) {
  const reduction::config cfg = config_of(p), block_cfg = config_of(p, "block_threads");
  const int threshold = int(p.integer("threshold", 0));
  const std::string vote = p.text("vote", "both");
  const bool ballot = vote == "ballot" || vote == "both", block = vote == "block" || vote == "both";
  if (!ballot && !block)
    throw std::invalid_argument("vote=" + vote + " is none of ballot, block, both");
  if (ballot) require(st, cfg);
  if (block) require(st, block_cfg);
  auto b = std::make_shared<buffers>(n, false);
  workload w;
  w.keep = b;
  w.description =
      "count of in[i] > " + std::to_string(threshold) + ", n = " + std::to_string(n) + " ints, " +
      (ballot ? "__ballot_sync at " + std::to_string(cfg.threads) + " threads" : std::string()) +
      (ballot && block ? " then " : "") +
      (block ? "__syncthreads_count at " + std::to_string(block_cfg.threads) + " threads"
             : std::string());
  w.call = [&st, b, n, threshold, ballot, block, cfg, block_cfg](cudaStream_t s) {
    auto *count = b->answer_as<unsigned long long>();
    if (ballot) st.count(count, b->ints.get(), n, threshold, false, cfg, b->ws, s);
    if (block) st.count(count, b->ints.get(), n, threshold, true, block_cfg, b->ws, s);
  };
  return w;
}

}  // namespace

workload course::judge::make_workload(const params &p) {
  const auto *st = linked_stage<reduction::stage>();
  if (!st) throw std::logic_error("no chapter-12 stage is linked into this judge program");
  const std::int64_t n = p.integer("n", COURSE_WORKLOAD_N);
  if (n < 1) throw std::invalid_argument("n must be at least 1");
  if (st->count) return count_workload(*st, p, std::size_t(n));
  return sum_workload(*st, p, std::size_t(n));
}
