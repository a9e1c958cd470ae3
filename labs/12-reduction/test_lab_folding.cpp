// SPDX-License-Identifier: BSD-3-Clause
// Tests of the folding lab (lab_folding.cu, figure 12.1; timed by the benchmark, not a stage):
//   - fold_many, in each of the three folding orders (pairwise divergent, pairwise strided,
//     interleaved): grids of 1, 2, 7, 133 and 1000 blocks of 256, repetitions 0 to 64, against
//     *answer = reps * sum + blocks * 256 * reps * (reps - 1) / 2 mod 2^32 (lab_folding.h);
//   - sum_contiguous_runs and sum_grid_stride: sizes 0 and 1, a partial warp and block, sizes
//     around the number of threads the GPU holds at once (where a contiguous run per thread
//     becomes two, and where the grid-stride loop starts its second pass), 2^24 + 7.
// Integers compare exactly (the GPU adds mod 2^32 in any order; the host sums in 64 bits and
// wraps). Inputs are fresh random ints (the seed is printed on failure; COURSE_SEED replays), each
// array `offset` ints into its allocation (the lab's loads are scalar: any alignment) with
// 0x3fffffff in the guards before and after it (odd: any number of stray reads moves the answer);
// the answer sits in a poisoned slot with a poisoned guard zone after it; the input must be
// unchanged. Calls run on the legacy stream and on a non-blocking one. [sweep] draws the orders,
// grids, repetitions, sizes and offsets from one seed.
#include "host_reference.h"
#include "lab_folding.h"

#include "common/check.h"
#include "common/memory.h"
#include "common/random.h"
#include "common/random_fill.h"
#include "harness/catch.h"
#include "harness/sweep.h"
#include "harness/test_guards.h"
#include "harness/test_support.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

using course::test::answer_slot;
using course::test::check_input_untouched;
using course::test::got_text;
using course::test::guarded;
using course::test::guarded_input;
using course::test::random_ints;
namespace lab = reduction::lab;

namespace {

constexpr int guard_value = 0x3fffffff;  // course::test::input_guard_value<int>()
constexpr lab::fold all_folds[] = {lab::fold::pairwise_divergent, lab::fold::pairwise_strided,
                                   lab::fold::interleaved};

// What an answer that is off by a multiple of the guard value most likely did.
std::string guard_hint(int got, int want) {
  const int k = course::test::guard_multiple(got, want, guard_value, 64);
  return k ? " (off by " + std::to_string(k) +
                 " x the input's guard value 0x3fffffff: it read outside its input)"
           : "";
}

std::string placement_text(std::size_t offset, cudaStream_t stream) {
  return (offset ? " input offset " + std::to_string(offset) : std::string()) +
         (stream ? " (non-blocking stream)" : "");
}

// fold_many(f) over `blocks` blocks of 256 fresh ints in [lo, hi], `reps` times.
void check_fold(lab::fold f, int blocks, int reps, std::size_t offset = 0,
                cudaStream_t stream = nullptr, int lo = -1000, int hi = 1000) {
  const std::uint64_t seed = course::fresh_seed();
  INFO("seed " << seed);
  const std::size_t n = std::size_t(blocks) * lab::fold_threads;
  const std::vector<int> h = random_ints(n, seed, lo, hi);
  const auto in = guarded_input(h, offset, guard_value);
  answer_slot<int> answer;
  lab::fold_many(f, answer.get(), in.get(), blocks, reps, stream);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::string who = std::string("lab_folding, fold_many(") + lab::name(f) +
                          "), blocks=" + std::to_string(blocks) + " reps=" + std::to_string(reps) +
                          placement_text(offset, stream);
  long long sum = 0;
  for (int v : h) sum += v;
  // reps * sum + n * (0 + 1 + ... + reps - 1), mod 2^32.
  const long long want_exact =
      (long long)reps * sum + (long long)n * ((long long)reps * (reps - 1) / 2);
  const int want = reduction::wrap32(want_exact), got = answer.read(who);
  if (got != want)
    FAIL(who << ": expected " << want << ", got " << got_text(got) << guard_hint(got, want));
  check_input_untouched(who, in, h);
  SUCCEED();  // one assertion per checked call, so the summary counts them
}

using global_sum_fn = void (*)(int *, const int *, std::size_t, cudaStream_t);
struct global_sum {
  global_sum_fn fn;
  const char *name;
};
const global_sum global_sums[] = {{lab::sum_contiguous_runs, "sum_contiguous_runs"},
                                  {lab::sum_grid_stride, "sum_grid_stride"}};

void check_global_sum(const global_sum &g, std::size_t n, std::size_t offset = 0,
                      cudaStream_t stream = nullptr, int lo = -1000, int hi = 1000) {
  const std::uint64_t seed = course::fresh_seed();
  INFO("seed " << seed);
  const std::vector<int> h = random_ints(n, seed, lo, hi);
  const auto in = guarded_input(h, offset, guard_value);
  answer_slot<int> answer;
  g.fn(answer.get(), in.get(), n, stream);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::string who = std::string("lab_folding, ") + g.name + ", n=" + std::to_string(n) +
                          placement_text(offset, stream);
  const int want = reduction::wrap32(
      reduction::host_sum<long long>(n, [&](std::size_t i) { return (long long)h[i]; }));
  const int got = answer.read(who);
  if (got != want)
    FAIL(who << ": expected " << want << ", got " << got_text(got) << guard_hint(got, want));
  check_input_untouched(who, in, h);
  SUCCEED();
}

}  // namespace

TEST_CASE("each folding order: the answer for every grid and number of repetitions",
          "[lab][fold]") {
  for (lab::fold f : all_folds)
    for (int blocks : {1, 2, 7, 133, 1000})
      for (int reps : {0, 1, 2, 3, 64}) {
        // Under a sanitizer (10-100x slower) the largest grid with the most repetitions adds
        // little.
        if (course::test::under_sanitizer() && blocks * reps > 133 * 3) continue;
        check_fold(f, blocks, reps);
      }
}

TEST_CASE("each folding order: misaligned inputs, a non-blocking stream, sums that wrap",
          "[lab][fold]") {
  course::stream side;
  for (lab::fold f : all_folds) {
    for (std::size_t offset : {std::size_t(1), std::size_t(2), std::size_t(3)})
      check_fold(f, 7, 3, offset);
    check_fold(f, 133, 5, 1, side);
    check_fold(f, 1000, 2, 0, nullptr, -(1 << 30), 1 << 30);  // the sum wraps around 2^32
  }
}

TEST_CASE("the global sums, contiguous runs and grid-stride, at awkward sizes", "[lab][global]") {
  const std::size_t r = course::test::resident_threads();
  const std::size_t sizes[] = {0,
                               1,
                               31,
                               33,
                               255,
                               256,
                               257,
                               1000,
                               r - 1,
                               r,
                               r + 1,
                               2 * r + 3,
                               course::test::sanitizer_size(1000003),
                               course::test::sanitizer_size((std::size_t(1) << 24) + 7)};
  for (const global_sum &g : global_sums)
    for (std::size_t n : sizes) check_global_sum(g, n);
}

TEST_CASE("the global sums: misaligned inputs, a non-blocking stream, sums that wrap",
          "[lab][global]") {
  course::stream side;
  const std::size_t n = course::test::sanitizer_size(1000003);
  for (const global_sum &g : global_sums) {
    for (std::size_t offset : {std::size_t(1), std::size_t(2), std::size_t(3)})
      check_global_sum(g, 100003, offset);
    check_global_sum(g, n, 2, side);
    check_global_sum(g, n, 0, nullptr, -(1 << 30), 1 << 30);
  }
}

// The seeded random sweep: each folding order in turn with a random grid (1..3000 blocks) and
// number of repetitions (0..70); each global sum in turn at a size near the warp, block and
// resident-grid boundaries, a prime, or spread over the orders of magnitude up to 3e6; inputs
// offset by 0..3 ints, values of both signs or large enough to wrap, a quarter of the calls on a
// non-blocking stream. A failure names the case; the test main prints the replay line.
TEST_CASE("seeded random sweep: orders, grids, repetitions, sizes and alignments", "[sweep]") {
  course::test::sweep_rng rng(course::fresh_seed());
  INFO("sweep seed " << rng.seed());
  course::stream side;
  const std::size_t r = course::test::resident_threads();
  const int cases = 60;
  for (int c = 0; c < cases; ++c) {
    const std::size_t offset = rng.below(4);
    const cudaStream_t stream = rng.chance(0.25) ? cudaStream_t(side) : nullptr;
    const bool wide = rng.chance(0.3);
    const int lo = wide ? -(1 << 30) : -1000, hi = wide ? 1 << 30 : 1000;
    INFO("case " << c);
    if (c % 2 == 0) {
      const lab::fold f = all_folds[std::size_t(c / 2) % 3];
      const int blocks = int(
          rng.pick({std::size_t(1), std::size_t(2), rng.between(3, 300), rng.between(300, 3000)}));
      const int reps = int(rng.pick({std::size_t(0), std::size_t(1), rng.between(2, 70)}));
      check_fold(f, blocks, reps, offset, stream, lo, hi);
    } else {
      const global_sum &g = global_sums[std::size_t(c / 2) % 2];
      const std::size_t n = rng.awkward_size({32, 256, r, 2 * r}, 3000000);
      check_global_sum(g, n, offset, stream, lo, hi);
    }
  }
}
