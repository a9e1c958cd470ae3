// SPDX-License-Identifier: BSD-3-Clause
// Stage 07: through the host, mapped pinned memory (zero-copy). The CUDA Handbook 11.4,
// stream4Mapped.cu (listing 11.7).
//
// Changes from stage 06: no copies and no device buffers at all. The host arrays are pinned and
// mapped into the GPU's address space; the kernel's loads of x and y and its stores to out cross
// PCIe themselves. Data is processed as it arrives and results leave as they are produced, so
// there is no "overhang" of a first copy in or a last copy out, and both PCIe directions are busy
// at once. It only pays when each byte is touched once, as here.
// What to look for: the wall time against the floor of overlapped transfers; no H2D/D2H phases
// (they do not exist).
#include "streaming.h"

#include "common/check.h"

namespace {

void saxpy_streamed(float *h_out, const float *h_x, const float *h_y, std::size_t n, float alpha,
                    streaming::host_context &ctx) {
  // EXERCISE BEGIN: get device pointers for the three mapped host arrays
  // (cudaHostGetDevicePointer), launch streaming::launch_saxpy on them, and wait for it.
  float *d_out = nullptr, *d_x = nullptr, *d_y = nullptr;
  CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void **>(&d_out), h_out, 0));
  CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void **>(&d_x), const_cast<float *>(h_x), 0));
  CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void **>(&d_y), const_cast<float *>(h_y), 0));
  streaming::launch_saxpy(d_out, d_x, d_y, n, alpha, ctx.launch, 0);
  CUDA_CHECK(cudaStreamSynchronize(0));
  // EXERCISE END
}

}  // namespace

STREAMING_HOST_STAGE(saxpy_streamed, course::host_memory::mapped, "mapped pinned memory, zero-copy (stream4Mapped)");
