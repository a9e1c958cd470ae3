// SPDX-License-Identifier: BSD-3-Clause
// Stage 10 (a lab, after the progression): Blelloch's work-efficient scan. The CUDA Handbook 13.2
// (the up-sweep and down-sweep, figures 13.2 to 13.5) and 13.3 (the Brent-Kung circuit).
//
// Changes from stage 05: only the block scan, O(B) adds instead of Kogge-Stone's O(B log B): the
// up-sweep builds partial sums up a balanced tree, the down-sweep pushes the prefixes back down, 2
// log2(B) steps with a barrier each. The book: its bank conflicts, or the addressing that avoids
// them, cost more than it saves. The plain addressing here lets the conflicts show.
// What to look for: in the timing, this row against stage 05's; in the SASS, two loops of LDS/STS
// with a BAR.SYNC per step, against stage 05's three BAR.SYNC; in the profile, the shared-memory
// bank conflicts (profiles.md).
#include "lesson_two_level_vec4.cuh"

namespace {

// The Blelloch scan of one value per thread across the block, with the interface of
// scan::shared_block_scan: returns the inclusive scan of x and sets total to the block's sum.
struct blelloch_block_scan {
  template <unsigned B, class T>
  struct storage {
    T sh[B];
  };
  template <unsigned B, class T>
  __device__ static T inclusive(storage<B, T> &s, T x, T &total) {
    const unsigned t = threadIdx.x;
    // EXERCISE BEGIN: Blelloch's work-efficient scan of the block in s.sh (figures 13.2 to 13.5):
    // return this thread's inclusive value and set total to the block's sum.
    s.sh[t] = x;
#pragma unroll
    for (unsigned d = 1; d < B; d *= 2) {
      __syncthreads();
      const unsigned i = (t + 1) * 2 * d - 1;
      if (i < B) s.sh[i] += s.sh[i - d];
    }
    __syncthreads();
    total = s.sh[B - 1];
    __syncthreads();  // every thread has read the root before it is cleared
    if (t == 0) s.sh[B - 1] = T(0);
#pragma unroll
    for (unsigned d = B / 2; d >= 1; d /= 2) {
      __syncthreads();
      const unsigned i = (t + 1) * 2 * d - 1;
      if (i < B) {
        const T lower = s.sh[i - d];
        s.sh[i - d] = s.sh[i];
        s.sh[i] += lower;
      }
    }
    __syncthreads();
    return s.sh[t] + x;
    // EXERCISE END
  }
};

template <class T>
void scan_entry(T *d_out, const T *d_in, std::size_t n, bool inclusive, const scan::config &cfg,
                scan::workspace &ws, cudaStream_t stream) {
  scan::with_block_size(cfg.threads, [&](auto b) {
    constexpr unsigned B = decltype(b)::value;
    scan::two_level_scan4<B, blelloch_block_scan>(d_out, d_in, n, inclusive, cfg, ws, stream);
  });
}

}  // namespace

SCAN_STAGE("lab: stage 05 on Blelloch's up-sweep/down-sweep block scan (13.2)", scan_entry<int>,
           scan_entry<float>, true, nullptr, nullptr, 3);
