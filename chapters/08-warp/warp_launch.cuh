// SPDX-License-Identifier: BSD-3-Clause
// What the chapter's stage files share: thread coordinates in a one-dimensional block, the two
// launch shapes (one warp per task; a grid-stride loop over elements), and the two-pass array sum
// that stages 02 and 03 put on top of their block reductions. CUDA syntax: stage files only.
#pragma once

#include "warp.h"

#include "common/check.h"
#include "common/launch.h"
#include "common/memory.h"

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace warp {

// In a one-dimensional block (stage 01 shows the general formulas).
__device__ inline int lane_id() { return threadIdx.x % lanes; }
__device__ inline int warp_in_block() { return threadIdx.x / lanes; }
__device__ inline std::size_t warp_in_grid() {
  return (blockIdx.x * std::size_t(blockDim.x) + threadIdx.x) / lanes;
}

// Launches for kernels where warp w of the grid does task w and warps past n_warps return at once
// (whole warps, so a full-mask intrinsic never waits on a lane that left).
constexpr int warps_per_block = 8;

template <class... Params, class... Args>
void launch_warps(void (*kernel)(Params...), std::size_t n_warps, Args... args) {
  if (n_warps == 0) return;
  const std::size_t blocks = (n_warps + warps_per_block - 1) / warps_per_block;
  kernel<<<static_cast<unsigned>(blocks), warps_per_block * lanes>>>(args...);
  CUDA_CHECK_LAUNCH();
}

// Launches for grid-stride kernels over n elements: as many blocks as the GPU holds at once, no
// more than the elements need.
constexpr int elementwise_threads = 256;

template <class... Params, class... Args>
void launch_elementwise(void (*kernel)(Params...), std::size_t n, Args... args) {
  if (n == 0) return;
  const std::size_t needed = (n + elementwise_threads - 1) / elementwise_threads;
  const auto blocks =
      std::min<std::size_t>(course::resident_blocks(kernel, elementwise_threads), needed);
  kernel<<<static_cast<unsigned>(blocks), elementwise_threads>>>(args...);
  CUDA_CHECK_LAUNCH();
}

// This thread's share of an array sum: its elements of a grid-stride loop over in[0, n).
__device__ inline int grid_stride_sum(const int *in, std::size_t n) {
  int sum = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(blockDim.x) * gridDim.x)
    sum += in[i];
  return sum;
}

// *out = sum of in[0, n) from a block reduction kernel(partials, in, n) that writes the sum of its
// block's grid-stride share to partials[blockIdx.x]: once over the array, then once more, in one
// block, over the partial sums. (The article adds the partial sums on the host instead.)
template <class... Params>
void sum_two_pass(void (*block_sum)(Params...), int *out, const int *in, std::size_t n,
                  const reduce_config &cfg) {
  if (cfg.threads < lanes || cfg.threads > 1024 || cfg.threads % lanes != 0)
    throw std::invalid_argument(
        "block reductions need whole warps: threads per block must be a multiple of 32 in "
        "32..1024, not " +
        std::to_string(cfg.threads));
  const std::size_t needed = std::max<std::size_t>(1, (n + cfg.threads - 1) / cfg.threads);
  const int resident = cfg.blocks ? cfg.blocks : course::resident_blocks(block_sum, cfg.threads);
  const int blocks = static_cast<int>(std::min<std::size_t>(resident, needed));
  course::device_buffer<int> partials(blocks);
  block_sum<<<blocks, cfg.threads>>>(partials.get(), in, n);
  CUDA_CHECK_LAUNCH();
  block_sum<<<1, cfg.threads>>>(out, partials.get(), static_cast<std::size_t>(blocks));
  CUDA_CHECK_LAUNCH();
  // The partial sums are freed on return: wait until the second pass has read them.
  CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace warp
