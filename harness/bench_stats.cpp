// SPDX-License-Identifier: BSD-3-Clause
#include "harness/bench_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace course {
namespace bench {

stats describe(std::vector<double> samples) {
  stats s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  s.median = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  s.min = samples.front();
  s.max = samples.back();
  s.repeats = static_cast<int>(n);
  double sum = 0;
  for (double v : samples) sum += v;
  s.mean = sum / double(n);
  if (n > 1 && s.mean != 0) {
    double sq = 0;
    for (double v : samples) sq += (v - s.mean) * (v - s.mean);
    s.spread = std::sqrt(sq / double(n - 1)) / std::fabs(s.mean);
  }
  return s;
}

const char *to_string(stop_reason r) {
  switch (r) {
    case stop_reason::go_on: return "-";
    case stop_reason::quiet: return "quiet";
    case stop_reason::max_repeats: return "max repeats";
    case stop_reason::time_cap: return "time cap";
  }
  return "-";
}

stop_reason should_stop(const std::vector<double> &samples, double elapsed_s,
                        const stop_rule &rule) {
  const int n = static_cast<int>(samples.size());
  if (n < std::max(rule.min_repeats, 1)) return stop_reason::go_on;
  if (rule.max_noise <= 0 || describe(samples).spread < rule.max_noise) return stop_reason::quiet;
  if (n >= rule.max_repeats) return stop_reason::max_repeats;
  if (elapsed_s >= rule.max_seconds) return stop_reason::time_cap;
  return stop_reason::go_on;
}

bool noisy(const stats &s) { return s.spread > noisy_spread; }

ratio_range pair_ratios(const std::vector<double> &baseline_ms,
                        const std::vector<double> &stage_ms) {
  std::vector<double> ratios;
  for (std::size_t i = 0; i < std::min(baseline_ms.size(), stage_ms.size()); ++i)
    if (baseline_ms[i] > 0 && stage_ms[i] > 0) ratios.push_back(baseline_ms[i] / stage_ms[i]);
  ratio_range r;
  const stats s = describe(ratios);
  r.median = s.median;
  r.min = s.min;
  r.max = s.max;
  r.pairs = s.repeats;
  return r;
}

std::string range_text(const ratio_range &r, int decimals) {
  char lo[32], hi[32];
  std::snprintf(lo, sizeof lo, "%.*f", decimals, r.min);
  std::snprintf(hi, sizeof hi, "%.*f", decimals, r.max);
  return (std::string(lo) == hi ? std::string(lo) : std::string(lo) + "-" + hi) + "x";
}

int batch_calls(double per_call_ms, double target_ms) {
  if (!(per_call_ms > 0)) return 2;
  const double k = std::ceil(target_ms / per_call_ms);
  return static_cast<int>(std::clamp(k, 2.0, 1000.0));
}

}  // namespace bench
}  // namespace course
