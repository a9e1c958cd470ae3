// SPDX-License-Identifier: BSD-3-Clause
// The statistics of the benchmark harness, as pure functions (no GPU): a row's median, min, max
// and spread; the stopping rule that decides how many repeats a row gets; the range of a ratio
// over interleaved pairs. harness/tests/test_common.cpp tests them on the host.
//
// Spread, here and in every table, is nvbench's noise: the relative standard deviation of the
// samples, sample std-dev / mean. A row repeats until its spread is under --max-noise (1%) after
// at least --repeats samples, or until --max-repeats samples or --max-time seconds, whichever
// comes first; a row that ends above 5% gets a warning line under its table. (max - min) / median
// is not the criterion: over hundreds of samples one preempted call would keep it above 1% for
// ever, while the relative std-dev settles.
#pragma once

#include <string>
#include <vector>

namespace course {
namespace bench {

struct stats {
  double median = 0, min = 0, max = 0, mean = 0;
  double spread =
      0;  // relative standard deviation, sample std-dev / mean (0 with fewer than 2 samples)
  int repeats = 0;
};

// The statistics of a set of samples (any order); all zero for none.
stats describe(std::vector<double> samples);

struct stop_rule {
  int min_repeats = 10;    // --repeats
  int max_repeats = 1000;  // --max-repeats
  double max_noise =
      0.01;  // --max-noise, as a fraction (0: no noise criterion, exactly min_repeats)
  double max_seconds = 1.0;  // --max-time, wall time per measurement
};

enum class stop_reason { go_on, quiet, max_repeats, time_cap };
const char *to_string(stop_reason r);  // "-", "quiet", "max repeats", "time cap"

// Whether a measurement with these samples, taken in `elapsed_s` seconds, is done. Never before
// min_repeats samples; then when the spread is under max_noise (or max_noise is 0), when
// max_repeats samples are in, or when max_seconds have passed.
stop_reason should_stop(const std::vector<double> &samples, double elapsed_s,
                        const stop_rule &rule);

// A row whose spread exceeds this gets a warning line under its table.
constexpr double noisy_spread = 0.05;
bool noisy(const stats &s);

// The ratio baseline[i] / stage[i] of interleaved pairs (> 1: the stage is faster than the
// baseline): its median, min and max over the pairs. Pairs with a zero or missing time are left
// out.
struct ratio_range {
  double median = 0, min = 0, max = 0;
  int pairs = 0;
};
ratio_range pair_ratios(const std::vector<double> &baseline_ms,
                        const std::vector<double> &stage_ms);

// "1.02-1.04x" (two decimals; one figure when min and max print the same).
std::string range_text(const ratio_range &r, int decimals = 2);

// How many back-to-back calls the batch figure puts between one event pair: enough that the
// batch lasts about target_ms, at least 2 and at most 1000.
int batch_calls(double per_call_ms, double target_ms = 2.0);

}  // namespace bench
}  // namespace course
