// SPDX-License-Identifier: BSD-3-Clause
// Stage 10 (a lab, after the progression): Blelloch's work-efficient scan. The CUDA Handbook 13.2
// (the up-sweep and down-sweep, figures 13.2 .. 13.5) and 13.3 (it is the Brent-Kung circuit).
//
// The task: replace stage 05's block scan with Blelloch's: an up-sweep that builds partial sums up
// a balanced tree in shared memory, the root set to the identity, and a down-sweep that pushes the
// prefixes back down: O(B) adds where a Kogge-Stone scan does O(B log B). The rest of stage 05 runs
// on it unchanged. The book warns that it does not suit CUDA well: its strided accesses conflict in
// shared-memory banks. Write it plainly and measure what the book describes.
// Watch for: a barrier between every two steps; every thread must have read the block's total
// before the root is cleared; the bank conflicts (make profile-diff against stage 05).
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
    COURSE_TODO();
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
