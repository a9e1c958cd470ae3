// SPDX-License-Identifier: BSD-3-Clause
// A lab for the benchmark, not a stage: the book's other way to unroll (11.1). Before writing the
// templated kernel of listing 11.4 (stage 02), the book tried `#pragma unroll` on the plain
// grid-stride loop and got about 118 GiB/s on GK104, against 116 for the loop as it was and 135 for
// the templated kernel. The pragma copies the loop body U times, but each copy still loads,
// computes and stores before the next one loads: out may alias x or y, so the compiler may not
// move a later copy's loads above an earlier copy's store, and the trip count is unknown, so each
// copy keeps its bounds test. The templated kernel loads all its values first, by construction.
// The benchmark's lab table puts the two side by side (`bench-11-streaming`, table
// lab_pragma_unroll); compare their SASS with `cuobjdump -sass` on the bench binary.
#include "streaming_launch.cuh"

namespace streaming {
namespace {

template <int U>
__global__ void saxpy_pragma_kernel(float *out, const float *x, const float *y, std::size_t n, float alpha) {
#pragma unroll U
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(blockDim.x) * gridDim.x)
    out[i] = alpha * x[i] + y[i];
}

}  // namespace

void launch_saxpy_pragma_unroll(float *out, const float *x, const float *y, std::size_t n, float alpha,
                                const launch_config &cfg, cudaStream_t stream) {
  if (n == 0) return;
  dispatch_unroll(cfg.unroll, [&](auto unroll) {
    launch(saxpy_pragma_kernel<decltype(unroll)::value>, cfg, stream, out, x, y, n, alpha);
  });
}

}  // namespace streaming
