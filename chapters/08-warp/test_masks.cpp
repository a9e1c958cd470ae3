// SPDX-License-Identifier: BSD-3-Clause
// The mask-checked tests of chapter 8 (test <variant>/08-warp/<stage>/masks). The stage is compiled
// once more with every _sync warp intrinsic checked (harness/warp_mask_check.cuh, set up by
// cmake/CourseWarpMasks.cmake); this program runs its entry points, whichever kind of stage it is,
// and fails when a call broke the intrinsics' rules: a lane calling with a mask that does not name
// it, a shuffle reading a lane that does not take part, an invalid width, lanes of one mask that
// disagree. The failure names the stage, the case, the intrinsic and its source line.
//
// These bugs usually give the right answer on today's GPUs (a partial mask with all 32 lanes
// calling, for instance: the lanes still run together and the hardware reads whatever register is
// there), and compute-sanitizer's synccheck does not report them; the plain tests cannot see
// them. So the cases here aim at the places where a mask is partial or a warp partly idle: every
// block size the reductions take (so the second-level sum over the warps' sums has 1..32 lanes
// that matter), sizes whose last warp is partly past the end, partial masks in the shuffles and
// votes. The answers are checked as well, with shared memory poisoned before every reduction (a
// slot no lane wrote, read by a lane outside the intended range, changes the sum), inputs followed
// by guards that change the answer if read, and poisoned outputs.
#include "warp.h"
#include "warp_model.h"

#include "common/memory.h"
#include "common/random.h"
#include "common/random_fill.h"
#include "harness/catch.h"
#include "harness/sweep.h"
#include "harness/test_guards.h"
#include "harness/test_support.h"
#include "harness/warp_mask_check.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

using course::test::guarded;

namespace {

template <class Stage>
const Stage *linked() {
  const auto &stages = course::registered<Stage>();
  return stages.size() == 1 ? &stages.front() : nullptr;
}

std::string stage_id() {
  if (auto *s = linked<warp::shuffle_stage>()) return s->info.id;
  if (auto *s = linked<warp::reduce_stage>()) return s->info.id;
  if (auto *s = linked<warp::vote_stage>()) return s->info.id;
  if (auto *s = linked<warp::predication_stage>()) return s->info.id;
  return "?";
}

// What every reduction sees in shared memory it did not write (best effort: see
// warp_mask_check.h), and what the inputs' guards hold: odd, so any number of stray reads moves a
// sum mod 2^32.
constexpr int poison_value = 0x3fffffff;

// After each call of the stage: nothing recorded.
void expect_clean(const std::string &what) {
  const course::warpcheck::record r = course::warpcheck::take();
  if (!r.clean())
    FAIL(
        "stage "
        << stage_id() << " (mask-checked build), " << what << ":" << course::warpcheck::describe(r)
        << "\n  A right answer does not make this right: the result is undefined, and another GPU, driver or "
           "compiler may compute another.");
  SUCCEED();  // one assertion per checked call
}

int wrapped(std::int64_t sum) {
  return static_cast<int>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(sum)));
}

// ---- stage 01: shuffles -----------------------------------------------------------------------

// Whether every lane of c.mask reads a lane of c.mask (so the result is defined everywhere, and a
// correct stage makes no read the check would report).
bool defined_everywhere(const warp::shuffle_case &c) {
  for (int lane = 0; lane < warp::lanes; ++lane)
    if (c.mask >> lane & 1u)
      if (!(c.mask >> warp::model::source_lane(c.form, lane, c.arg, c.width) & 1u)) return false;
  return true;
}

template <class T>
void check_shuffles(void (*run)(T *, const T *, const warp::shuffle_case *, int),
                    const std::vector<warp::shuffle_case> &cases, const std::string &what) {
  const std::uint64_t seed = course::fresh_seed();
  INFO("seed " << seed);
  const std::size_t n = cases.size() * warp::lanes;
  const std::vector<int> in_int = course::test::lane_tagged_ints(n, seed);
  std::vector<T> in(n);
  for (std::size_t i = 0; i < n; ++i) in[i] = course::test::value_from<T>(in_int[i]);
  auto d_in = guarded<T>::input(n, 0, course::test::value_from<T>(poison_value));
  auto d_cases = guarded<warp::shuffle_case>::input(
      cases.size(), 0,
      warp::shuffle_case{warp::shuffle_form::broadcast, 0, warp::lanes, warp::full_mask});
  auto d_out = guarded<T>::output(n, 0);
  d_in.upload(in);
  d_cases.upload(cases);
  run(d_out.get(), d_in.get(), d_cases.get(), static_cast<int>(cases.size()));
  expect_clean(what);
  const auto got = d_out.download();
  for (std::size_t i = 0; i < n; ++i) {
    const auto &c = cases[i / warp::lanes];
    const auto want =
        warp::model::shuffle(c, &in_int[i - i % warp::lanes], static_cast<int>(i % warp::lanes));
    const T w = course::test::value_from<T>(*want);  // defined everywhere: the cases were chosen so
    if (std::memcmp(&got[i], &w, sizeof w) != 0)
      FAIL("stage " << stage_id() << " (mask-checked build), " << what << ": lane "
                    << i % warp::lanes << " of the warp doing " << to_string(c.form)
                    << " arg=" << c.arg << " width=" << c.width << " mask=0x" << std::hex << c.mask
                    << std::dec << " got a wrong value"
                    << (course::test::is_poison(got[i]) ? " (never written)" : ""));
  }
  if (!d_out.guard_damage().empty())
    FAIL("stage " << stage_id() << ", " << what << ": wrote outside the output");
}

std::vector<warp::shuffle_case> defined_cases(const std::vector<unsigned> &masks) {
  std::vector<warp::shuffle_case> cases;
  for (auto form : warp::all_shuffle_forms) {
    int lo = 0, hi = warp::lanes - 1;
    if (form == warp::shuffle_form::broadcast) lo = -33, hi = 64;
    if (form == warp::shuffle_form::rotate) lo = -40, hi = 40;
    for (unsigned mask : masks)
      for (int width : {2, 4, 8, 16, 32})
        for (int arg = lo; arg <= hi; ++arg) {
          const warp::shuffle_case c{form, arg, width, mask};
          if (defined_everywhere(c)) cases.push_back(c);
        }
  }
  return cases;
}

// ---- stages 02 and 03: reductions -------------------------------------------------------------

void check_warp_sums(warp::warp_sum_fn fn, const char *name, int n_warps) {
  const std::uint64_t seed = course::fresh_seed();
  INFO("seed " << seed);
  const std::size_t n = std::size_t(n_warps) * warp::lanes;
  std::vector<int> in = course::test::random_ints(n, seed, -1000000, 1000000);
  auto d_in = course::test::guarded_input(in, 0, poison_value);
  auto d_out = guarded<int>::output(n, 0);
  course::warpcheck::poison_shared_memory(poison_value);
  fn(d_out.get(), d_in.get(), n_warps);
  const std::string what = std::string(name) + ", " + std::to_string(n_warps) + " warps";
  expect_clean(what);
  const auto got = d_out.download();
  for (int w = 0; w < n_warps; ++w) {
    std::int64_t sum = 0;
    for (int lane = 0; lane < warp::lanes; ++lane) sum += in[std::size_t(w) * warp::lanes + lane];
    for (int lane = 0; lane < warp::lanes; ++lane) {
      const int g = got[std::size_t(w) * warp::lanes + lane];
      if (g != wrapped(sum))
        FAIL("stage " << stage_id() << " (mask-checked build), " << what << ": lane " << lane
                      << " of warp " << w << " holds " << g << ", expected " << wrapped(sum));
    }
  }
  if (!d_out.guard_damage().empty())
    FAIL("stage " << stage_id() << ", " << what << ": wrote outside the output");
}

void check_sum(const warp::reduce_stage &s, std::size_t n, int threads, int blocks = 0) {
  const std::uint64_t seed = course::fresh_seed();
  INFO("seed " << seed);
  std::vector<int> in = course::test::random_ints(n, seed, -1000, 1000);
  auto d_in = course::test::guarded_input(in, 0, poison_value);
  auto d_out = guarded<int>::output(1, 0);
  warp::reduce_config cfg;
  cfg.threads = threads;
  cfg.blocks = blocks;
  course::warpcheck::poison_shared_memory(poison_value);
  s.sum(d_out.get(), d_in.get(), n, cfg);
  const std::string what = "sum n=" + std::to_string(n) + " threads=" + std::to_string(threads) +
                           " blocks=" + (blocks ? std::to_string(blocks) : std::string("resident"));
  expect_clean(what);
  std::int64_t want = 0;
  for (int v : in) want += v;
  const int got = d_out.download()[0];
  if (got != wrapped(want))
    FAIL(
        "stage "
        << stage_id() << " (mask-checked build), " << what << ": expected " << wrapped(want)
        << ", got "
        << (course::test::is_poison(got) ? std::string("never written (poison)")
                                         : std::to_string(got))
        << " (shared memory was poisoned with 0x3fffffff before the call, and the input's guards hold it: a "
           "slot or an element that no lane should have read)");
  if (!d_out.guard_damage().empty())
    FAIL("stage " << stage_id() << ", " << what << ": wrote outside *out");
}

// ---- stage 04: votes ----------------------------------------------------------------------------

int popc(unsigned x) {
  int c = 0;
  for (; x; x &= x - 1) ++c;
  return c;
}

void check_votes(const warp::vote_stage &s, const std::vector<unsigned> &masks,
                 const std::vector<unsigned> &preds, const std::string &what) {
  const std::size_t n = masks.size() * warp::lanes;
  std::vector<int> pred(n);
  for (std::size_t w = 0; w < masks.size(); ++w)
    for (int lane = 0; lane < warp::lanes; ++lane)
      pred[w * warp::lanes + lane] = preds[w] >> lane & 1u ? -(lane + 7) : 0;
  auto d_pred = guarded<int>::input(n, 0, poison_value);
  auto d_masks = guarded<unsigned>::input(masks.size(), 0, warp::full_mask);
  auto d_out = guarded<warp::vote_result>::output(n, 0);
  d_pred.upload(pred);
  d_masks.upload(masks);
  s.vote(d_out.get(), d_pred.get(), d_masks.get(), static_cast<int>(masks.size()));
  expect_clean(what);
  const auto got = d_out.download();
  for (std::size_t w = 0; w < masks.size(); ++w) {
    const unsigned mask = masks[w], ballot = preds[w] & mask;
    for (int lane = 0; lane < warp::lanes; ++lane) {
      const warp::vote_result &r = got[w * warp::lanes + lane];
      std::ostringstream where;
      where << "stage " << stage_id() << " (mask-checked build), " << what << ": warp " << w
            << " (mask 0x" << std::hex << mask << ", predicates 0x" << preds[w] << std::dec
            << "), lane " << lane;
      if (!(mask >> lane & 1u)) {
        if (!course::test::is_poison(r))
          FAIL(where.str() << " is not in the mask but wrote a result");
        continue;
      }
      const int leader = ballot ? __builtin_ctz(ballot) : -1;
      if (r.ballot != ballot || r.any != (ballot != 0) || r.all != (ballot == mask) ||
          r.count != popc(ballot) || r.rank != popc(ballot & ((1u << lane) - 1u)) ||
          r.leader != leader)
        FAIL(where.str() << ": a wrong vote (ballot 0x" << std::hex << r.ballot << ", expected 0x"
                         << ballot << std::dec << ")");
    }
  }
}

void check_compact(const warp::vote_stage &s, std::size_t n) {
  const std::uint64_t seed = course::fresh_seed();
  INFO("seed " << seed);
  const std::size_t n_warps = (n + warp::lanes - 1) / warp::lanes;
  std::vector<int> in = course::test::random_ints(n, seed, -1000, 1000);
  auto d_in = guarded<int>::input(n, 0, poison_value);  // positive: kept, if a lane past n reads it
  d_in.upload(in);
  auto d_out = guarded<int>::output(n_warps * warp::lanes, 0);
  auto d_counts = guarded<int>::output(n_warps, 0);
  s.compact(d_out.get(), d_counts.get(), d_in.get(), n);
  const std::string what = "compact n=" + std::to_string(n);
  expect_clean(what);
  const auto got = d_out.download(), counts = d_counts.download();
  for (std::size_t w = 0; w < n_warps; ++w) {
    std::vector<int> kept;
    for (std::size_t i = w * warp::lanes; i < n && i < (w + 1) * warp::lanes; ++i)
      if (in[i] > 0) kept.push_back(in[i]);
    if (counts[w] != int(kept.size()))
      FAIL("stage " << stage_id() << " (mask-checked build), " << what << ": warp " << w << " kept "
                    << kept.size() << " values, its count says " << counts[w]);
    for (std::size_t k = 0; k < kept.size(); ++k)
      if (got[w * warp::lanes + k] != kept[k])
        FAIL("stage " << stage_id() << " (mask-checked build), " << what << ": warp " << w
                      << ", slot " << k << ": expected " << kept[k] << ", got "
                      << got[w * warp::lanes + k]);
  }
  if (!d_out.guard_damage().empty() || !d_counts.guard_damage().empty())
    FAIL("stage " << stage_id() << ", " << what << ": wrote outside the outputs");
}

// ---- stage 05: predication ----------------------------------------------------------------------

// Both forms of a kernel, on the same input: the record must stay clean, and the two forms agree
// bit for bit (test_predication.cpp holds them to the host's formulas).
template <class Run>
void check_forms_agree(const std::string &what, std::size_t n, Run run) {
  const std::uint64_t seed = course::fresh_seed();
  INFO("seed " << seed);
  std::vector<int> in = course::test::random_ints(n, seed, std::numeric_limits<int>::min(),
                                                  std::numeric_limits<int>::max());
  auto d_in = course::test::guarded_input(in, 0, poison_value);
  auto a = guarded<int>::output(n, 0), b = guarded<int>::output(n, 0);
  run(warp::form::as_written, a.get(), d_in.get(), n);
  run(warp::form::branch_free, b.get(), d_in.get(), n);
  expect_clean(what + ", n=" + std::to_string(n));
  if (a.download() != b.download())
    FAIL("stage " << stage_id() << " (mask-checked build), " << what << ", n=" << n
                  << ": the two forms disagree");
}

}  // namespace

TEST_CASE("shared memory keeps what the previous kernel left (the poison's premise)",
          "[masks][poison]") {
  // Not a check of the stage: whether poisoning shared memory before a call reaches the stage's
  // kernels on this GPU. If it does not, the reductions' answers are checked without it.
  if (!course::warpcheck::shared_memory_keeps_poison(poison_value))
    WARN(
        "this GPU does not keep shared memory between kernels: a read of a slot no lane wrote may go unseen here");
  course::warpcheck::take();
  SUCCEED();
}

TEST_CASE("shuffles: every lane calls inside its mask and reads a lane that takes part",
          "[masks][shuffle]") {
  const warp::shuffle_stage *s = linked<warp::shuffle_stage>();
  if (!s) return;
  std::vector<unsigned> masks = {
      warp::full_mask, 0x0000ffffu, 0xffff0000u, 0x55555555u, 0xaaaaaaaau, 0x0f0f0f0fu, 0x80000001u,
      0x00000001u,     0xfffffffeu, 0x7fffffffu, 0x000000ffu, 0x00ff00ffu, 0x0000000fu};
  const std::uint64_t seed = course::fresh_seed();
  for (std::uint64_t k = 0; k < 4; ++k)
    masks.push_back(static_cast<unsigned>(course::random_bits(seed, k)));
  INFO("random masks from seed " << seed);
  const auto cases = defined_cases(masks);
  check_shuffles<int>(s->shuffle, cases,
                      "int shuffles, " + std::to_string(cases.size()) + " cases");
  check_shuffles<float>(s->shuffle_float, cases, "float shuffles");
  check_shuffles<double>(s->shuffle_double, cases, "double shuffles");
  // The ids: no intrinsic in the solution, but a stage may use one (partial warps: 5 x 7, 33 x 3).
  for (int x : {32, 5, 33, 1024}) {
    const int y = x == 5 ? 7 : x == 33 ? 3 : 1;
    course::device_buffer<warp::thread_ids> ids(std::size_t(x) * y);
    s->ids(ids.get(), x, y, 8);
    expect_clean("thread ids, block " + std::to_string(x) + " x " + std::to_string(y));
  }
}

TEST_CASE("reductions: every block size, partial last warps, shared memory poisoned",
          "[masks][sum]") {
  const warp::reduce_stage *s = linked<warp::reduce_stage>();
  if (!s) return;
  for (int n_warps : {1, 7, 9, 1001}) {
    check_warp_sums(s->warp_sum, "warp_sum", n_warps);
    if (s->warp_sum_short) check_warp_sums(s->warp_sum_short, "warp_sum_short", n_warps);
  }
  // Every block size: the second-level sum over the warps' sums has 1..32 lanes that matter.
  for (int threads = warp::lanes; threads <= 1024; threads += warp::lanes)
    for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(31), std::size_t(33),
                          std::size_t(1000), std::size_t(100003)})
      check_sum(*s, n, threads);
  for (int threads : {32, 96, 256, 1024}) check_sum(*s, 1000003, threads);
  for (int blocks : {1, 2, 7}) check_sum(*s, 100003, 160, blocks);
}

TEST_CASE("votes among partial masks, and compaction with a partial last warp", "[masks][vote]") {
  const warp::vote_stage *s = linked<warp::vote_stage>();
  if (!s) return;
  const std::uint64_t seed = course::fresh_seed();
  INFO("seed " << seed);
  std::vector<unsigned> masks, preds;
  std::vector<unsigned> mask_list = {warp::full_mask, 0x0000ffffu, 0xffff0000u,
                                     0xaaaaaaaau,     0x80000001u, 0x00000001u,
                                     0x80000000u,     0xfffffffeu, 0x000000ffu};
  for (std::uint64_t m = 0; m < 8; ++m)
    mask_list.push_back(static_cast<unsigned>(course::random_bits(seed, m)) | 1u);
  std::uint64_t k = 100;
  for (unsigned mask : mask_list)
    for (unsigned p : {warp::full_mask, 0u, mask, ~mask,
                       static_cast<unsigned>(course::random_bits(seed, k++))}) {
      masks.push_back(mask);
      preds.push_back(p);
    }
  check_votes(*s, masks, preds, "votes, " + std::to_string(masks.size()) + " warps");
  for (std::size_t n : {std::size_t(1), std::size_t(31), std::size_t(32), std::size_t(33),
                        std::size_t(63), std::size_t(65), std::size_t(1000003)})
    check_compact(*s, n);
}

TEST_CASE("predication kernels: no warp intrinsic breaks its rules", "[masks][predication]") {
  const warp::predication_stage *s = linked<warp::predication_stage>();
  if (!s) return;
  for (std::size_t n : {std::size_t(1), std::size_t(33), std::size_t(100003)}) {
    for (auto kernel : warp::all_branchy)
      check_forms_agree(to_string(kernel), n,
                        [&](warp::form f, int *out, const int *in, std::size_t m) {
                          s->run(kernel, f, out, in, m);
                        });
    course::device_buffer<int> ints(n), results(n);
    course::fill_random_device(ints.get(), n, course::fresh_seed(), -1000, 1000);
    for (int length : {1, 8, 32}) {
      s->branch_length(length, results.get(), ints.get(), n);
      expect_clean("branch_of<" + std::to_string(length) + ">, n=" + std::to_string(n));
    }
    course::device_buffer<float> in(n), out(n);
    course::fill_random_device(in.get(), n, course::fresh_seed());
    for (auto f : warp::all_forms) {
      s->clamp_abs(f, out.get(), in.get(), n);
      expect_clean(std::string("clamp_abs, ") + to_string(f) + ", n=" + std::to_string(n));
    }
  }
}
