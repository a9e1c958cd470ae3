// SPDX-License-Identifier: BSD-3-Clause
// The frame of every chapter's benchmark (bench.h's run). In its own file: it measures the SM
// clock with a kernel (ceilings.cu), and the host tests, which link the table code of bench.cpp,
// must not pull device code in.
#include "harness/bench.h"

#include <exception>

namespace course {
namespace bench {

int run(const std::string &program, const std::string &bench, const std::string &title,
        const std::string &results_dir, const std::function<bool(report &)> &body) {
  gpu_status gpu = probe_gpu();
  if (!gpu.usable) {
    // 77: the course's one exit status for "needs a GPU" (every program and make target; README).
    std::fprintf(stderr, "%s: needs a GPU: %s (the committed reference results: make tour)\n",
                 program.c_str(), gpu.reason.c_str());
    return 77;
  }
  try {
    report rep(bench, title, query_device());
    rep.version("CCCL", cccl_version());
    rep.sustained_clock(sustained_sm_clock_mhz());
    rep.event_floor(event_pair_floor_ms());
    rep.print_preamble();
    bool ok = body(rep);
    rep.print_headlines();
    rep.write(results_dir);
    if (!ok) {
      std::fprintf(stderr, "%s: a stage computed a wrong result (see above)\n", program.c_str());
      return 1;
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "%s: %s\n", program.c_str(), e.what());
    return 1;
  }
  return 0;
}

}  // namespace bench
}  // namespace course
