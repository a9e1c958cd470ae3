// SPDX-License-Identifier: BSD-3-Clause
// Stage 04: warp votes and lane masks. After The CUDA Handbook 8.6.1 (warp-level primitives) and
// 12.7 (predicate reductions with __ballot and __popc).
//
// A vote reduces one bit per lane across the warp in one instruction, and the PTX special
// registers %lanemask_lt, _le, _eq, _ge, _gt give each lane the bits of the lanes below, at and
// above it. The task: every lane of a vote's mask learns the warp's ballot, any and all, how many
// lanes' predicates hold, its own rank among those lanes and the lowest of them; then warp-level
// stream compaction: each warp writes its positive values, in order and with no gaps, to the first
// slots of its 32, and their count (chapter 13 scales the idea to a whole array).
//
// Watch for: the _sync forms name the lanes that take part, and lanes outside the mask count as
// 0 in a ballot. In the compaction, the lanes of the last warp past the end of the array must not
// read, yet the warp's vote waits for every lane its mask names. Look for
// (`make sass STAGE=exercise/08-warp/04_vote`): VOTE, POPC and the S2R of the lane masks.
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
  COURSE_TODO();
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
  COURSE_TODO();
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
