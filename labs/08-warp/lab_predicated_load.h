// SPDX-License-Identifier: BSD-3-Clause
// The predicated-load lab (not a stage: no exercise). See lab_predicated_load.cu.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace warp {

// warp_sums[w] = the sum of in[32w + l] over the lanes l < lanes_on of warp w, for the
// ceil(n / 32) warps that cover in[0, n); lanes_on in [0, 32]. The other lanes' loads are
// predicated off: they read nothing, so `in` may even be null when lanes_on is 0.
void lab_predicated_sums(int *d_warp_sums, const int *d_in, std::size_t n, int lanes_on,
                         cudaStream_t stream = nullptr);

}  // namespace warp
