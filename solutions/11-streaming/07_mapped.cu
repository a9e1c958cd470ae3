// SPDX-License-Identifier: BSD-3-Clause
// Stage 07: through the host, mapped pinned memory. The CUDA Handbook 11.4 (stream4Mapped.cu,
// listing 11.7).
//
// Changes from stage 06: no copies and no device buffers. The host arrays are pinned and mapped
// into the GPU's address space, and stage 01's kernel loads and stores across PCIe itself, so
// nothing is left over at either end. It pays because each byte is touched once; the book's caveats
// (11.4): mapped memory suits writes best, and on a discrete GPU every access crosses PCIe.
// What to look for: this row's x_floor against stage 06's in the host progression; no phases; in
// the profile (`make profile STAGE=11-streaming/07_mapped`), almost no DRAM traffic and warps
// waiting on memory nearly all the time: the kernel is the transfer.
#include "lesson_grid_stride.cuh"
#include "streaming.h"

#include "common/check.h"

namespace {

// count floats of pinned host memory, mapped into the device's address space.
float *mapped_alloc(std::size_t count) {
  float *p = nullptr;
  // EXERCISE BEGIN: count floats of page-locked host memory that the device can address.
  CUDA_CHECK(
      cudaHostAlloc(reinterpret_cast<void **>(&p), count * sizeof(float), cudaHostAllocMapped));
  // EXERCISE END
  return p;
}

void mapped_release(float *p) {
  // EXERCISE BEGIN: give the mapped memory back.
  CUDA_CHECK(cudaFreeHost(p));
  // EXERCISE END
}

void saxpy_streamed(float *h_out, const float *h_x, const float *h_y, std::size_t n, float alpha,
                    streaming::host_context &ctx) {
  // EXERCISE BEGIN: stage 01's kernel on the mapped host arrays themselves, no copies, h_out
  // complete when you return.
  float *d_out = nullptr, *d_x = nullptr, *d_y = nullptr;
  CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void **>(&d_out), h_out, 0));
  CUDA_CHECK(
      cudaHostGetDevicePointer(reinterpret_cast<void **>(&d_x), const_cast<float *>(h_x), 0));
  CUDA_CHECK(
      cudaHostGetDevicePointer(reinterpret_cast<void **>(&d_y), const_cast<float *>(h_y), 0));
  streaming::launch_saxpy(d_out, d_x, d_y, n, alpha, ctx.launch, ctx.streams[0]);
  CUDA_CHECK(cudaStreamSynchronize(ctx.streams[0]));
  // EXERCISE END
}

}  // namespace

STREAMING_HOST_STAGE(saxpy_streamed, mapped_alloc, mapped_release, course::host_memory::mapped,
                     "mapped pinned memory (stream4Mapped, 11.4)");
