// SPDX-License-Identifier: BSD-3-Clause
// How the device stages launch their kernels: grid sized to fill the GPU unless the caller asked
// for a size, and a block size the kernel can really launch with. A kernel that needs many
// registers per thread (stage 03 unrolled 16 times holds 32 float4 values) cannot run 1024
// threads per block; asking for it is refused here with the reason, not left to a launch error.
#pragma once

#include "streaming.h"

#include "common/check.h"
#include "common/launch.h"

#include <stdexcept>
#include <string>

namespace streaming {

template <class... Params, class... Args>
void launch(void (*kernel)(Params...), const launch_config &cfg, cudaStream_t stream,
            Args... args) {
  cudaFuncAttributes attr{};
  CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
  if (cfg.threads > attr.maxThreadsPerBlock)
    throw std::invalid_argument("this kernel uses " + std::to_string(attr.numRegs) +
                                " registers per thread, so at most " +
                                std::to_string(attr.maxThreadsPerBlock) +
                                " threads per block, not " + std::to_string(cfg.threads));
  int blocks = cfg.blocks ? cfg.blocks : course::resident_blocks(kernel, cfg.threads);
  kernel<<<blocks, cfg.threads, 0, stream>>>(args...);
  CUDA_CHECK_LAUNCH();
}

}  // namespace streaming
