// SPDX-License-Identifier: BSD-3-Clause
// The goals that are absolute rates, and so hold only on the GPU they were set for: N-body's
// interactions/s and the NCC bank's template-pixel products/s. They were set on the H100 SXM and
// hold on the H200 SXM: both have 132 SMs at 1.98 GHz, the same FP32 pipes and tensor cores (the
// H200 differs in memory, which neither workload is bound by). A GPU is matched by its name and
// its SM count, so an H100 PCIe (114 SMs) is not taken for one. On any other GPU the benches say
// that no absolute goal is set for it and name the figure to compare instead (a share of the
// GPU's own bound, or the library's rate); they never judge it against these numbers.
// Goals that are ratios (NCC >= 10x NPP, two GPUs >= 1.8x one) hold everywhere and are not here,
// but for NCC's 16x16 goal against NPP, whose library rate was measured on the H200 only.
#pragma once

#include "common/device.h"

#include <cstdio>
#include <string>

namespace course {
namespace bench {

struct gpu_goals {
  const char *name;   // a part of the device name: "H100", "H200"
  int sms;            // and its SM count
  double nbody;       // interactions/s, the best stage at the progression's N
  double nbody_128k;  // interactions/s, the best stage at N = 128K
  double ncc_bank;    // template-pixel products/s, 10_tensor_bank, K = 32, 16x16
  // NCC's best stage at the progression's 16x16 template: NPP time / stage time, and
  // its share of the IDP4A ceiling, in %; 0: none set. Set on the H200, where NPP was measured.
  double ncc_vs_npp_16 = 0;
  double ncc_ceiling_pct_16 = 0;
};

inline constexpr gpu_goals goals_by_gpu[] = {
    {"H100", 132, 2.0e12, 2.3e12, 100e12},
    {"H200", 132, 2.0e12, 2.3e12, 100e12, 30, 30},
};

// The goals set for this GPU, or nullptr when none are.
inline const gpu_goals *goals_for(const device_info &d) {
  for (const gpu_goals &g : goals_by_gpu)
    if (d.name.find(g.name) != std::string::npos && d.sms == g.sms) return &g;
  return nullptr;
}

// "goal for NVIDIA H200 (132 SMs)": how a goal line names the GPU it applies to.
inline std::string goal_for_text(const device_info &d) {
  return "goal for " + d.name + " (" + std::to_string(d.sms) + " SMs)";
}

// The GPUs the table lists, for the line a GPU without goals prints: "H100 and H200 (132 SMs)".
inline std::string goal_gpus_text() {
  std::string out;
  const std::size_t n = sizeof goals_by_gpu / sizeof *goals_by_gpu;
  for (std::size_t i = 0; i < n; ++i)
    out += std::string(i == 0       ? ""
                       : i + 1 == n ? " and "
                                    : ", ") +
           goals_by_gpu[i].name + " (" + std::to_string(goals_by_gpu[i].sms) + " SMs)";
  return out;
}

// A goal as the course writes it, in units of 1e12: "2.3e12", "100e12".
inline std::string e12_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v >= 10e12 ? "%.0fe12" : "%.1fe12", v / 1e12);
  return buf;
}

}  // namespace bench
}  // namespace course
