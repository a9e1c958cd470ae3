// SPDX-License-Identifier: BSD-3-Clause
// A lab, not a stage: the book's other way to unroll (11.1). Before the templated kernel of
// listing 11.4 (stage 02), the book tried `#pragma unroll` on listing 11.2's grid-stride loop and
// got about 118 GiB/s on GK104, against 116 for the loop as it was and 135 for the templated
// kernel; it gives no reason. The SASS shows one: the pragma copies the loop body U times, and
// since the trip count is unknown every copy keeps its own bounds exit (`@P0 EXIT` after each
// store). A later copy's loads may not be moved above that exit (past n they could fault), so each
// copy still loads, computes and stores before the next one loads, and a thread has no more loads
// in flight than in the plain loop. Aliasing is not what holds them back: with __restrict__ on
// out, x and y the order stays the same (the loads only become LDG.E.CONSTANT). The templated
// kernel tests once whether a whole group of n fits, then loads all n values, by construction.
// The benchmark's table lab_pragma_unroll puts the two side by side (`bench-11-streaming`); the
// SASS of saxpy_pragma_kernel<4> is in the benchmark binary (cuobjdump -sass
// build/bin/bench-11-streaming).
#include "streaming_launch.cuh"

namespace streaming {
namespace {

template <int U>
__global__ void saxpy_pragma_kernel(float *out, const float *x, const float *y, std::size_t n,
                                    float alpha) {
#pragma unroll U
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(blockDim.x) * gridDim.x)
    out[i] = alpha * x[i] + y[i];
}

}  // namespace

void launch_saxpy_pragma_unroll(float *out, const float *x, const float *y, std::size_t n,
                                float alpha, const launch_config &cfg, cudaStream_t stream) {
  if (n == 0) return;
  dispatch_unroll(cfg.unroll, [&](auto unroll) {
    launch(saxpy_pragma_kernel<decltype(unroll)::value>, cfg, stream, out, x, y, n, alpha);
  });
}

}  // namespace streaming
