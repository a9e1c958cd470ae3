// SPDX-License-Identifier: BSD-3-Clause
// Tests of stage 04 (vote): ballot, any, all, count, rank, leader and the lane masks of every
// lane that takes part, for all-true, all-false, single-lane and random predicates, with the
// full mask and with partial ones; and warp-level compaction against the host at awkward sizes.
// Fresh random data; the seed is printed on failure, COURSE_SEED replays.
#include "warp.h"
#include "warp_model.h"

#include "common/memory.h"
#include "common/random.h"
#include "common/random_fill.h"
#include "harness/catch.h"
#include "harness/test_support.h"

#include <bitset>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

using course::test::guard_elements;

namespace {

const warp::vote_stage &stage() { return course::test::stage_under_test<warp::vote_stage>(); }

struct vote_case {
  unsigned pred;  // bit k: lane k's predicate
  unsigned mask;
};

int popc(unsigned x) { return static_cast<int>(std::bitset<32>(x).count()); }

warp::vote_result expected(const vote_case &c, int lane) {
  const unsigned ballot = c.pred & c.mask;
  int leader = -1;
  for (int k = warp::lanes - 1; k >= 0; --k)
    if (ballot >> k & 1u) leader = k;
  using namespace warp::model;
  return {ballot,          ballot != 0,     ballot == c.mask,  popc(ballot),     popc(ballot & lanemask_lt(lane)),
          leader,          lanemask_lt(lane), lanemask_le(lane), lanemask_eq(lane), lanemask_ge(lane),
          lanemask_gt(lane)};
}

std::string show(const warp::vote_result &r) {
  std::ostringstream os;
  os << std::hex << "ballot=0x" << r.ballot << std::dec << " any=" << r.any << " all=" << r.all
     << " count=" << r.count << " rank=" << r.rank << " leader=" << r.leader << std::hex << " lt=0x" << r.lanemask_lt
     << " le=0x" << r.lanemask_le << " eq=0x" << r.lanemask_eq << " ge=0x" << r.lanemask_ge << " gt=0x"
     << r.lanemask_gt;
  return os.str();
}

bool same(const warp::vote_result &a, const warp::vote_result &b) {
  return a.ballot == b.ballot && a.any == b.any && a.all == b.all && a.count == b.count && a.rank == b.rank &&
         a.leader == b.leader && a.lanemask_lt == b.lanemask_lt && a.lanemask_le == b.lanemask_le &&
         a.lanemask_eq == b.lanemask_eq && a.lanemask_ge == b.lanemask_ge && a.lanemask_gt == b.lanemask_gt;
}

// One warp per case; lanes in the mask must report what the host computes, the others nothing.
void check_votes(const std::vector<vote_case> &cases, const std::string &what) {
  const std::size_t n = cases.size() * warp::lanes;
  std::vector<int> pred(n);
  std::vector<unsigned> masks(cases.size());
  for (std::size_t w = 0; w < cases.size(); ++w) {
    masks[w] = cases[w].mask;
    // Predicates as arbitrary non-zero ints, not just 1: the stage must test p != 0.
    for (int lane = 0; lane < warp::lanes; ++lane)
      pred[w * warp::lanes + lane] = cases[w].pred >> lane & 1u ? -(lane + 1) * 1000 : 0;
  }
  course::device_buffer<int> d_pred(n);
  course::device_buffer<unsigned> d_masks(cases.size());
  course::device_buffer<warp::vote_result> d_out(n + guard_elements);
  course::test::copy_to_device(d_pred.get(), pred);
  course::test::copy_to_device(d_masks.get(), masks);
  course::test::poison_device(d_out.get(), n + guard_elements);
  stage().vote(d_out.get(), d_pred.get(), d_masks.get(), static_cast<int>(cases.size()));
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto got = course::test::copy_to_host(d_out.get(), n + guard_elements);

  for (std::size_t w = 0; w < cases.size(); ++w) {
    const vote_case &c = cases[w];
    for (int lane = 0; lane < warp::lanes; ++lane) {
      const std::size_t i = w * warp::lanes + lane;
      std::ostringstream where;
      where << "stage " << stage().info.id << ", " << what << ": warp " << w << " (predicates 0x" << std::hex
            << c.pred << ", mask 0x" << c.mask << std::dec << "), lane " << lane;
      if (!(c.mask >> lane & 1u)) {
        if (!course::test::is_poison(got[i])) FAIL(where.str() << " is not in the mask but wrote a result");
        continue;
      }
      if (course::test::is_poison(got[i])) FAIL(where.str() << ": never written");
      const auto want = expected(c, lane);
      if (!same(got[i], want)) FAIL(where.str() << ":\n  expected " << show(want) << "\n  got      " << show(got[i]));
    }
  }
  SUCCEED();  // one assertion per checked call, so the summary counts them
  const std::size_t past = course::test::first_written(got, n);
  if (past < got.size()) FAIL("stage " << stage().info.id << ", " << what << ": wrote past the last warp, at " << past);
}

// Predicates where bit k is set with probability `percent` / 100.
unsigned random_predicates(std::uint64_t seed, std::uint64_t k, int percent) {
  unsigned p = 0;
  for (int lane = 0; lane < warp::lanes; ++lane)
    if (course::random_int(seed, k * warp::lanes + lane, 0, 99) < percent) p |= 1u << lane;
  return p;
}

}  // namespace

TEST_CASE("votes of the whole warp: all true, all false, one lane, random", "[vote]") {
  const std::uint64_t seed = course::fresh_seed();
  INFO("seed " << seed << " (COURSE_SEED replays the run)");
  std::vector<vote_case> cases = {{warp::full_mask, warp::full_mask}, {0u, warp::full_mask},
                                  {0x55555555u, warp::full_mask}, {0x80000000u, warp::full_mask}};
  for (int lane = 0; lane < warp::lanes; ++lane) {
    cases.push_back({1u << lane, warp::full_mask});
    cases.push_back({~(1u << lane), warp::full_mask});
  }
  std::uint64_t k = 0;
  for (int percent : {3, 10, 50, 90, 97})
    for (int rep = 0; rep < 20; ++rep) cases.push_back({random_predicates(seed, k++, percent), warp::full_mask});
  check_votes(cases, "full mask");
}

TEST_CASE("votes among the lanes of a partial mask", "[vote][mask]") {
  const std::uint64_t seed = course::fresh_seed();
  INFO("seed " << seed << " (COURSE_SEED replays the run)");
  std::vector<unsigned> masks = {0x0000ffffu, 0xffff0000u, 0xaaaaaaaau, 0x80000001u, 0x00000001u, 0x80000000u,
                                 0xfffffffeu};
  for (std::uint64_t m = 0; m < 8; ++m) masks.push_back(static_cast<unsigned>(course::random_bits(seed, 1000 + m)) | 1u);
  std::vector<vote_case> cases;
  std::uint64_t k = 0;
  for (unsigned mask : masks) {
    cases.push_back({warp::full_mask, mask});
    cases.push_back({0u, mask});
    cases.push_back({mask, mask});   // all true within the mask, false outside
    cases.push_back({~mask, mask});  // true only outside the mask: the vote sees none
    for (int percent : {10, 50, 90}) cases.push_back({random_predicates(seed, k++, percent), mask});
  }
  check_votes(cases, "partial masks");
}

namespace {

// Warp-level compaction of the positive values among n values in [lo, hi].
void check_compact(std::size_t n, int lo, int hi) {
  const std::uint64_t seed = course::fresh_seed();
  const std::size_t n_warps = (n + warp::lanes - 1) / warp::lanes, slots = n_warps * warp::lanes;
  course::device_buffer<int> in(n), out(slots + guard_elements), counts(n_warps + guard_elements);
  course::fill_random_device(in.get(), n, seed, lo, hi);
  course::test::poison_device(out.get(), slots + guard_elements);
  course::test::poison_device(counts.get(), n_warps + guard_elements);
  stage().compact(out.get(), counts.get(), in.get(), n);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto got = course::test::copy_to_host(out.get(), slots + guard_elements);
  const auto got_counts = course::test::copy_to_host(counts.get(), n_warps + guard_elements);

  const std::string what = "n=" + std::to_string(n) + ", values in [" + std::to_string(lo) + ", " +
                           std::to_string(hi) + "]";
  INFO("seed " << seed << " (COURSE_SEED replays the run)");
  for (std::size_t w = 0; w < n_warps; ++w) {
    std::vector<int> kept;
    for (std::size_t i = w * warp::lanes; i < n && i < (w + 1) * warp::lanes; ++i) {
      const int v = course::random_int(seed, i, lo, hi);
      if (v > 0) kept.push_back(v);
    }
    if (got_counts[w] != int(kept.size()))
      FAIL("stage " << stage().info.id << ", " << what << ": warp " << w << " kept " << kept.size()
                    << " values, its count says " << got_counts[w]);
    for (std::size_t k = 0; k < warp::lanes; ++k) {
      const std::size_t i = w * warp::lanes + k;
      if (k < kept.size() && got[i] != kept[k])
        FAIL("stage " << stage().info.id << ", " << what << ": warp " << w << ", slot " << k << ": expected "
                      << kept[k] << ", got "
                      << (course::test::is_poison(got[i]) ? "never written (poison)" : std::to_string(got[i])));
      if (k >= kept.size() && !course::test::is_poison(got[i]))
        FAIL("stage " << stage().info.id << ", " << what << ": warp " << w << " kept " << kept.size()
                      << " values but wrote slot " << k << " (" << got[i] << ")");
    }
  }
  SUCCEED();
  const std::size_t past = course::test::first_written(got, slots), past_counts = course::test::first_written(got_counts, n_warps);
  if (past < got.size()) FAIL("stage " << stage().info.id << ", " << what << ": wrote past the last warp's slots, at " << past);
  if (past_counts < got_counts.size())
    FAIL("stage " << stage().info.id << ", " << what << ": wrote a count past the last warp, at " << past_counts);
}

}  // namespace

TEST_CASE("warp-level compaction matches the host at awkward sizes", "[compact]") {
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(31), std::size_t(32), std::size_t(33),
                        std::size_t(1000003)})
    check_compact(n, -1000, 1000);
}

TEST_CASE("warp-level compaction when every value is kept, and when none is", "[compact]") {
  for (std::size_t n : {std::size_t(33), std::size_t(1000003)}) {
    check_compact(n, 1, 1000);
    check_compact(n, -1000, 0);
  }
}
