// SPDX-License-Identifier: BSD-3-Clause
// The Catch2 main of every test program. Before Catch runs it settles the cases where a test
// program has nothing to check, printing one line with COURSE_SKIP (CTest's skip marker):
//   - a stage still holding its exercise stub (TODO),
//   - a GPU test program on a machine with no usable GPU.
// When a test fails it prints the run's seed (COURSE_SEED=... and the command replay the run). It
// also implements --expect-reject, for the checker's self-test: the program passes only if
// the tests FAIL on the deliberately wrong stage it was built with.
// v2 builds its session runner only when asked; v3 ignores this.
#define CATCH_CONFIG_RUNNER
#include "harness/catch.h"

#include "common/device.h"
#include "common/random_fill.h"
#include "common/stage.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#ifndef COURSE_TEST_NEEDS_GPU
#define COURSE_TEST_NEEDS_GPU 1
#endif

namespace {

// A stage that never returns (a look-back waiting for a tile no block will publish, a barrier
// that not every thread reaches) must fail, not hang the class's GPU: after COURSE_TEST_TIMEOUT
// seconds (default 300, 30 for a deliberately wrong stage; 0: never) the program says so and
// exits, which ends its kernels.
void start_watchdog(bool expect_reject) {
  long seconds = expect_reject ? 30 : 300;
  if (const char *s = std::getenv("COURSE_TEST_TIMEOUT")) seconds = std::strtol(s, nullptr, 10);
  if (seconds <= 0) return;
  std::thread([seconds, expect_reject] {
    std::this_thread::sleep_for(std::chrono::seconds(seconds));
    std::printf(
        "\nTIMEOUT: the tests did not finish in %ld s: the stage hangs (a wait that never ends?)%s\n",
        seconds, expect_reject ? "; expected: the deliberately wrong stage was rejected" : "");
    std::fflush(stdout);
    std::_Exit(expect_reject ? 0 : 3);
  }).detach();
}

}  // namespace

int main(int argc, char **argv) {
  bool expect_reject = false;
  std::vector<char *> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--expect-reject") == 0) expect_reject = true;
    else args.push_back(argv[i]);
  }

  for (const auto &s : course::todo_stages()) {
    std::printf("COURSE_SKIP: TODO %s is not yet implemented: fill in the EXERCISE region of %s\n",
                s.id.c_str(), (s.todo_in.empty() ? s.file : s.todo_in).c_str());
  }
  if (!course::todo_stages().empty()) return 0;

  if (COURSE_TEST_NEEDS_GPU) {
    course::gpu_status gpu = course::probe_gpu();
    if (!gpu.usable) {
      std::printf("COURSE_SKIP: GPU tests skipped: %s\n", gpu.reason.c_str());
      return 77;  // the course's exit status for "needs a GPU"; CTest reports the test as skipped
    }
  }

  const unsigned long long seed = course::run_seed();
  start_watchdog(expect_reject);
  int failed = Catch::Session().run(static_cast<int>(args.size()), args.data());
  if (failed && !expect_reject) {
    // Every random input of the run derives from this one seed (common/random_fill.h).
    std::printf("\nreplay: COURSE_SEED=%llu", seed);
    for (char *a : args) std::printf(" '%s'", a);
    std::printf("\n");
  }
  if (!expect_reject) return failed;
  if (failed) {
    std::printf(
        "\nexpected: the tests rejected this deliberately wrong stage (%d failed assertion(s) above).\n",
        failed);
    return 0;
  }
  std::printf(
      "\nWRONG STAGE ACCEPTED: every test passed on a stage built to be wrong; the tests are too weak.\n");
  return 1;
}
