// SPDX-License-Identifier: BSD-3-Clause
// Stage 04: warp votes and lane masks. After The CUDA Handbook 8.6.1 (warp-level primitives) and
// 12.7 (predicate reductions with __ballot and __popc).
//
// A vote reduces one bit per lane across the warp in one instruction: __ballot_sync gathers the
// predicates into a word, __any_sync and __all_sync into one bit. With __popc and a lane mask a
// lane finds its place among the lanes whose predicate holds: warp-level stream compaction is one
// ballot and two popc. The _sync forms name the lanes that take part; the last warp's lanes past
// the end still vote (false).
// What to look for in SASS: VOTE.ANY R (ballot), VOTE.ANY and VOTE.ALL on predicates, POPC, FLO and
// BREV (__ffs), S2R SR_LTMASK for the lane masks, and nothing issued by the compaction's guarded
// load for the lanes past n.
#include "warp_launch.cuh"

namespace {

// This lane's masks, from the PTX special registers: the lanes below it (lt), up to and including
// it (le), itself (eq), from it up (ge), above it (gt).
struct lane_masks {
  unsigned lt, le, eq, ge, gt;
};

__device__ lane_masks hardware_lane_masks() {
  lane_masks m;
  asm("mov.u32 %0, %%lanemask_lt;\n\t"
      "mov.u32 %1, %%lanemask_le;\n\t"
      "mov.u32 %2, %%lanemask_eq;\n\t"
      "mov.u32 %3, %%lanemask_ge;\n\t"
      "mov.u32 %4, %%lanemask_gt;"
      : "=r"(m.lt), "=r"(m.le), "=r"(m.eq), "=r"(m.ge), "=r"(m.gt));
  return m;
}

__global__ void vote_kernel(warp::vote_result *out, const int *pred, const unsigned *masks,
                            int n_warps) {
  const std::size_t w = warp::warp_in_grid();
  if (w >= std::size_t(n_warps)) return;
  const unsigned mask = masks[w];
  const int lane = warp::lane_id();
  if (!(mask >> lane & 1u)) return;  // not in this vote
  const std::size_t i = w * warp::lanes + lane;
  warp::vote_result r{};
  // EXERCISE BEGIN: vote on p = pred[i] != 0 among the lanes of mask and fill in r.ballot, r.any,
  // r.all (0 or 1), r.count, r.rank and r.leader (-1 if none), with the lanes-below mask computed
  // from the lane id.
  const bool p = pred[i] != 0;
  r.ballot = __ballot_sync(mask, p);
  r.any = __any_sync(mask, p) != 0;
  r.all = __all_sync(mask, p) != 0;
  r.count = __popc(r.ballot);
  r.rank = __popc(r.ballot & ((1u << lane) - 1));
  r.leader = __ffs(r.ballot) - 1;
  // EXERCISE END
  const lane_masks m = hardware_lane_masks();
  r.lanemask_lt = m.lt;
  r.lanemask_le = m.le;
  r.lanemask_eq = m.eq;
  r.lanemask_ge = m.ge;
  r.lanemask_gt = m.gt;
  out[i] = r;
}

__global__ void compact_kernel(int *out, int *counts, const int *in, std::size_t n) {
  const std::size_t w = warp::warp_in_grid();
  if (w * warp::lanes >= n) return;  // whole warps: the last one may be partly past n
  // EXERCISE BEGIN: write this warp's positive values of in[32w, 32w + 32) below n to out[32w], in
  // order and with no gaps, and their count to counts[w], with hardware_lane_masks().lt.
  const int lane = warp::lane_id();
  const std::size_t i = w * warp::lanes + lane;
  const int v = i < n ? in[i] : 0;
  const bool keep = v > 0;
  const unsigned kept = __ballot_sync(warp::full_mask, keep);
  if (keep) out[w * warp::lanes + __popc(kept & hardware_lane_masks().lt)] = v;
  if (lane == 0) counts[w] = __popc(kept);
  // EXERCISE END
}

void vote(warp::vote_result *out, const int *pred, const unsigned *masks, int n_warps) {
  warp::launch_warps(vote_kernel, n_warps, out, pred, masks, n_warps);
}

void compact(int *out, int *counts, const int *in, std::size_t n) {
  warp::launch_warps(compact_kernel, (n + warp::lanes - 1) / warp::lanes, out, counts, in, n);
}

}  // namespace

WARP_STAGE(vote_stage, "ballot, any, all, popc and lane masks; warp-level compaction (8.6.1, 12.7)",
           vote, compact);
