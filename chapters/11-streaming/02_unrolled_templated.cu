// SPDX-License-Identifier: BSD-3-Clause
// Stage 02: SAXPY unrolled by a template parameter n. The CUDA Handbook 11.1, listing 11.4.
//
// Stage 01 keeps one load of x and one of y in flight per thread, and each thread waits for them
// before it can ask for more. The book's remedy: each thread loads several elements of each array
// before it uses any, so more bytes are in flight at once. It measured the idea on GK104 (listing
// 11.3: unrolling 4 times took 116 GiB/s to 128).
// Your task: the kernel for an unroll factor n, a template parameter (the host below turns the
// run-time factor into one). Each thread loads its n elements of x and of y into registers, then
// computes and stores them; the elements a warp loads together must still be consecutive; the
// last group of n may be partial.
// Watch for: the book's own loop bound (listing 11.4) goes wrong for a size_t N smaller than one
// sweep of the grid. Then: make sass STAGE=exercise/11-streaming/02_unrolled_templated (the
// loads of one trip issued before its first FFMA), and the benchmark's block size x unroll table.
#include "streaming_launch.cuh"

namespace {

template <int n>
__global__ void saxpy_kernel(float *out, const float *x, const float *y, std::size_t N,
                             float alpha) {
  // EXERCISE BEGIN: out = alpha * x + y over [0, N), each thread with n elements of x and n of y
  // in flight before it uses any, and warps still reading whole lines.
  COURSE_TODO();
  // EXERCISE END
}

void saxpy(float *out, const float *x, const float *y, std::size_t n, float alpha,
           const streaming::launch_config &cfg, cudaStream_t stream) {
  if (n == 0) return;
  streaming::dispatch_unroll(cfg.unroll, [&](auto unroll) {
    streaming::launch(saxpy_kernel<decltype(unroll)::value>, cfg, stream, out, x, y, n, alpha);
  });
}

}  // namespace

STREAMING_DEVICE_STAGE(saxpy, true, "unrolled by a template parameter (11.1, listing 11.4)");
