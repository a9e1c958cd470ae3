// SPDX-License-Identifier: BSD-3-Clause
// Tests of stage 04 (vote): ballot, any, all, count, rank, leader and the lane masks of every
// lane that takes part, for all-true, all-false, single-lane and random predicates, with the
// full mask and with partial ones; and warp-level compaction against the host at awkward sizes.
// Fresh random data; the seed is printed on failure, COURSE_SEED replays. The compaction's input
// is guarded by a value it keeps (a read past the end shows in the count); outputs are poisoned,
// with guard zones. The [sweep] test draws random votes, sizes and array offsets from one seed.
#include "warp.h"
#include "warp_model.h"

#include "common/memory.h"
#include "common/random.h"
#include "common/random_fill.h"
#include "harness/catch.h"
#include "harness/sweep.h"
#include "harness/test_guards.h"
#include "harness/test_support.h"

#include <bitset>
#include <cstdint>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

using course::test::guarded;

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
  return {ballot,
          ballot != 0,
          ballot == c.mask,
          popc(ballot),
          popc(ballot & lanemask_lt(lane)),
          leader,
          lanemask_lt(lane),
          lanemask_le(lane),
          lanemask_eq(lane),
          lanemask_ge(lane),
          lanemask_gt(lane)};
}

std::string show(const warp::vote_result &r) {
  std::ostringstream os;
  os << std::hex << "ballot=0x" << r.ballot << std::dec << " any=" << r.any << " all=" << r.all
     << " count=" << r.count << " rank=" << r.rank << " leader=" << r.leader << std::hex << " lt=0x"
     << r.lanemask_lt << " le=0x" << r.lanemask_le << " eq=0x" << r.lanemask_eq << " ge=0x"
     << r.lanemask_ge << " gt=0x" << r.lanemask_gt;
  return os.str();
}

bool same(const warp::vote_result &a, const warp::vote_result &b) {
  return a.ballot == b.ballot && a.any == b.any && a.all == b.all && a.count == b.count &&
         a.rank == b.rank && a.leader == b.leader && a.lanemask_lt == b.lanemask_lt &&
         a.lanemask_le == b.lanemask_le && a.lanemask_eq == b.lanemask_eq &&
         a.lanemask_ge == b.lanemask_ge && a.lanemask_gt == b.lanemask_gt;
}

// One warp per case; lanes in the mask must report what the host computes, the others nothing.
// pred holds each lane's predicate as an int (any non-zero value is true); the predicates, the
// masks and the output start pred_offset, masks_offset and out_offset elements into their
// allocations.
void check_votes(const std::vector<vote_case> &cases, const std::vector<int> &pred,
                 const std::string &what, std::size_t pred_offset = 0, std::size_t masks_offset = 0,
                 std::size_t out_offset = 0) {
  const std::size_t n = cases.size() * warp::lanes;
  std::vector<unsigned> masks(cases.size());
  for (std::size_t w = 0; w < cases.size(); ++w) masks[w] = cases[w].mask;
  // Past the end: predicates true, masks of all lanes (a warp past the last that voted would
  // write).
  auto d_pred = guarded<int>::input(n, pred_offset, course::test::input_guard_value<int>());
  auto d_masks = guarded<unsigned>::input(cases.size(), masks_offset, warp::full_mask);
  auto d_out = guarded<warp::vote_result>::output(n, out_offset);
  d_pred.upload(pred);
  d_masks.upload(masks);
  stage().vote(d_out.get(), d_pred.get(), d_masks.get(), static_cast<int>(cases.size()));
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto got = d_out.download();
  std::string where_all = what;
  if (pred_offset) where_all += ", predicates offset " + std::to_string(pred_offset);
  if (masks_offset) where_all += ", masks offset " + std::to_string(masks_offset);
  if (out_offset) where_all += ", output offset " + std::to_string(out_offset);

  for (std::size_t w = 0; w < cases.size(); ++w) {
    const vote_case &c = cases[w];
    for (int lane = 0; lane < warp::lanes; ++lane) {
      const std::size_t i = w * warp::lanes + lane;
      const auto where = [&] {
        std::ostringstream os;
        os << "stage " << stage().info.id << ", " << where_all << ": warp " << w
           << " (predicates 0x" << std::hex << c.pred << ", mask 0x" << c.mask << std::dec
           << "), lane " << lane << " (predicate " << pred[i] << ")";
        return os.str();
      };
      if (!(c.mask >> lane & 1u)) {
        if (!course::test::is_poison(got[i]))
          FAIL(where() << " is not in the mask but wrote a result");
        continue;
      }
      if (course::test::is_poison(got[i])) FAIL(where() << ": never written");
      const auto want = expected(c, lane);
      if (!same(got[i], want))
        FAIL(where() << ":\n  expected " << show(want) << "\n  got      " << show(got[i]));
    }
  }
  SUCCEED();  // one assertion per checked call, so the summary counts them
  const std::string damage = d_out.guard_damage();
  if (!damage.empty())
    FAIL("stage " << stage().info.id << ", " << where_all << ": wrote outside the output ("
                  << damage << ")");
  if (d_pred.download() != pred || d_masks.download() != masks || !d_pred.guard_damage().empty() ||
      !d_masks.guard_damage().empty())
    FAIL("stage " << stage().info.id << ", " << where_all
                  << ": the predicates or the masks were modified");
}

// The same with the predicates of each case as arbitrary non-zero ints, not just 1: the stage
// must test p != 0.
void check_votes(const std::vector<vote_case> &cases, const std::string &what) {
  std::vector<int> pred(cases.size() * warp::lanes);
  for (std::size_t w = 0; w < cases.size(); ++w)
    for (int lane = 0; lane < warp::lanes; ++lane)
      pred[w * warp::lanes + lane] = cases[w].pred >> lane & 1u ? -(lane + 1) * 1000 : 0;
  check_votes(cases, pred, what);
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
  INFO("seed " << seed << "");
  std::vector<vote_case> cases = {{warp::full_mask, warp::full_mask},
                                  {0u, warp::full_mask},
                                  {0x55555555u, warp::full_mask},
                                  {0x80000000u, warp::full_mask}};
  for (int lane = 0; lane < warp::lanes; ++lane) {
    cases.push_back({1u << lane, warp::full_mask});
    cases.push_back({~(1u << lane), warp::full_mask});
  }
  std::uint64_t k = 0;
  for (int percent : {3, 10, 50, 90, 97})
    for (int rep = 0; rep < 20; ++rep)
      cases.push_back({random_predicates(seed, k++, percent), warp::full_mask});
  check_votes(cases, "full mask");
}

TEST_CASE("votes among the lanes of a partial mask", "[vote][mask]") {
  const std::uint64_t seed = course::fresh_seed();
  INFO("seed " << seed << "");
  std::vector<unsigned> masks = {0x0000ffffu, 0xffff0000u, 0xaaaaaaaau, 0x80000001u,
                                 0x00000001u, 0x80000000u, 0xfffffffeu};
  for (std::uint64_t m = 0; m < 8; ++m)
    masks.push_back(static_cast<unsigned>(course::random_bits(seed, 1000 + m)) | 1u);
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

// Where the compaction's arrays start in their allocations, in ints, each on its own.
struct compact_offsets {
  std::size_t in = 0, out = 0, counts = 0;
};

// A value the compaction keeps, for the input's guards: a stage that reads past the end (or before
// the start) keeps it, and its count and slots show it.
constexpr int kept_guard = 0x3fffffff;

// Warp-level compaction of the positive values among n values in [lo, hi]. The input is guarded
// by kept_guard; out and counts are poisoned, with guard zones, and must stay poison past each
// warp's count and past the last warp.
void check_compact(std::size_t n, int lo, int hi, const compact_offsets &at = {}) {
  const std::uint64_t seed = course::fresh_seed();
  const std::size_t n_warps = (n + warp::lanes - 1) / warp::lanes, slots = n_warps * warp::lanes;
  std::vector<int> in = course::test::random_ints(n, seed, lo, hi);
  auto d_in = course::test::guarded_input(in, at.in, kept_guard);
  auto d_out = guarded<int>::output(slots, at.out);
  auto d_counts = guarded<int>::output(n_warps, at.counts);
  stage().compact(d_out.get(), d_counts.get(), d_in.get(), n);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto got = d_out.download();
  const auto got_counts = d_counts.download();

  std::string what = "n=" + std::to_string(n) + ", values in [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "]";
  if (at.in) what += ", input offset " + std::to_string(at.in);
  if (at.out) what += ", output offset " + std::to_string(at.out);
  if (at.counts) what += ", counts offset " + std::to_string(at.counts);
  INFO("seed " << seed);
  std::vector<int> kept;
  for (std::size_t w = 0; w < n_warps; ++w) {
    kept.clear();
    for (std::size_t i = w * warp::lanes; i < n && i < (w + 1) * warp::lanes; ++i)
      if (in[i] > 0) kept.push_back(in[i]);
    if (got_counts[w] != int(kept.size()))
      FAIL("stage " << stage().info.id << ", " << what << ": warp " << w << " kept " << kept.size()
                    << " values, its count says "
                    << (course::test::is_poison(got_counts[w]) ? "never written (poison)"
                                                               : std::to_string(got_counts[w])));
    for (std::size_t k = 0; k < warp::lanes; ++k) {
      const std::size_t i = w * warp::lanes + k;
      if (k < kept.size() && got[i] != kept[k])
        FAIL("stage " << stage().info.id << ", " << what << ": warp " << w << ", slot " << k
                      << ": expected " << kept[k] << ", got "
                      << (course::test::is_poison(got[i]) ? "never written (poison)"
                                                          : std::to_string(got[i])));
      if (k >= kept.size() && !course::test::is_poison(got[i]))
        FAIL("stage " << stage().info.id << ", " << what << ": warp " << w << " kept "
                      << kept.size() << " values but wrote slot " << k << " (" << got[i] << ")");
    }
  }
  SUCCEED();
  const std::string out_damage = d_out.guard_damage(), counts_damage = d_counts.guard_damage();
  if (!out_damage.empty())
    FAIL("stage " << stage().info.id << ", " << what << ": wrote outside the warps' slots ("
                  << out_damage << ")");
  if (!counts_damage.empty())
    FAIL("stage " << stage().info.id << ", " << what << ": wrote outside the counts ("
                  << counts_damage << ")");
  if (!d_in.guard_damage().empty() || d_in.download() != in)
    FAIL("stage " << stage().info.id << ", " << what << ": the input or its guards were modified");
}

}  // namespace

TEST_CASE("warp-level compaction matches the host at awkward sizes", "[compact]") {
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(31), std::size_t(32),
                        std::size_t(33), std::size_t(1000003)})
    check_compact(n, -1000, 1000);
}

TEST_CASE("warp-level compaction when every value is kept, and when none is", "[compact]") {
  for (std::size_t n : {std::size_t(33), std::size_t(1000003)}) {
    check_compact(n, 1, 1000);
    check_compact(n, -1000, 0);
  }
}

TEST_CASE("warp-level compaction with each array misaligned on its own", "[compact]") {
  const compact_offsets offsets[] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {3, 2, 1}};
  for (const compact_offsets &at : offsets) check_compact(100003, -1000, 1000, at);
}

// The seeded random sweep. Votes: three launches of a random number of warps (the last block of
// 8 warps partial), each warp with a random mask and predicates true with a probability from 0 to
// 1, as random non-zero ints; predicates, masks and output each misaligned on their own.
// Compaction: sizes at the warp and block boundaries, primes, one above 2^24, values all kept,
// none kept, few kept, or mixed; input, output and counts offsets 0..3 ints each, drawn
// independently; the input's guards hold a value the compaction keeps. A failure names the case;
// the test main prints the replay line.
TEST_CASE("seeded random sweep: votes and compaction", "[sweep]") {
  course::test::sweep_rng rng(course::fresh_seed());
  INFO("sweep seed " << rng.seed());
  for (int launch = 0; launch < 3; ++launch) {
    const std::size_t n_cases = rng.awkward_size({8, 32}, 4000);
    std::vector<vote_case> cases(n_cases);
    std::vector<int> pred(n_cases * warp::lanes, 0);
    for (std::size_t w = 0; w < n_cases; ++w) {
      cases[w].mask = rng.lane_mask();
      const double p = rng.pick({0.0, 0.03, 0.1, 0.5, 0.9, 0.97, 1.0});
      cases[w].pred = 0;
      for (int lane = 0; lane < warp::lanes; ++lane) {
        if (!rng.chance(p)) continue;
        cases[w].pred |= 1u << lane;
        const int v = static_cast<int>(static_cast<std::uint32_t>(rng.bits()));
        pred[w * warp::lanes + lane] = v ? v : 1;
      }
    }
    const std::size_t pred_offset = rng.below(4), masks_offset = rng.below(4),
                      out_offset = rng.below(4);
    INFO("vote launch " << launch);
    check_votes(cases, pred, "random votes, " + std::to_string(n_cases) + " warps", pred_offset,
                masks_offset, out_offset);
  }
  const course::test::value_range ranges[] = {{-1000, 1000}, {1, 1000}, {-1000, 0},
                                              {-3, 1},       {0, 1},    {-(1 << 30), 1 << 30}};
  const int compact_cases = 40;
  for (int c = 0; c < compact_cases; ++c) {
    std::size_t n = rng.awkward_size({32, 256}, 3000000);
    if (c == 23) n = (std::size_t(1) << 24) + rng.between(1, 1 << 20);
    const course::test::value_range r = ranges[rng.below(std::size(ranges))];
    compact_offsets at;
    at.in = rng.below(4);
    at.out = rng.below(4);
    at.counts = rng.below(4);
    INFO("compaction case " << c);
    check_compact(n, r.lo, r.hi, at);
  }
}
