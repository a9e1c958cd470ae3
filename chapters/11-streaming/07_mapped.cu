// SPDX-License-Identifier: BSD-3-Clause
// Stage 07: through the host, mapped pinned memory. The CUDA Handbook 11.4, stream4Mapped.cu
// (listing 11.7).
//
// Changes from stage 06: no copies and no device buffers at all. The host arrays are pinned and
// mapped into the GPU's address space; the kernel's loads of x and y and its stores to out cross
// PCIe themselves. Data is processed as it arrives and results leave as they are produced, so
// there is no "overhang" of a first copy in or a last copy out, and both PCIe directions are busy
// at once. It only pays when each byte is touched once, as here.
// The book's caveats: mapped memory suits writes best (a store goes on without waiting, a load
// waits for its round trip across the bus), so a workload that mostly reads it may not keep PCIe
// busy, and the SMs spend their time waiting on the bus. On a discrete GPU (the H100 here) every
// access still crosses PCIe; only on an integrated GPU, whose memory is the host's, is mapped
// memory "zero copy" proper. On a 64-bit system with unified addressing the device pointer of a
// mapped allocation equals the host pointer; cudaHostGetDevicePointer is the form that holds
// everywhere.
// What to look for: the wall time against the floor of overlapped transfers (H100, 2026-11-23:
// 23.96 ms, 1.08x the floor, against stage 06's 23.89 ms at 8 streams; run A 22.29 ms, 1.03x,
// against 22.43: tied, the winner changing between runs by under 1%); no H2D/D2H phases (they do
// not exist). Nsight Compute: the one kernel takes 22.0 ms at 0.0% DRAM throughput, a warp issuing
// every 4796 cycles, stalled on long_scoreboard: the kernel is the whole transfer. The kernel is
// streaming_kernel.cu's (sass/sm_90/07_mapped.sass holds none), stage 01's loop with the same
// LDG/STG: the kernel does not know its pointers are the host's.
#include "streaming.h"

#include "common/check.h"

namespace {

// count floats of pinned host memory, mapped into the device's address space.
float *mapped_alloc(std::size_t count) {
  float *p = nullptr;
  // EXERCISE BEGIN: allocate count floats of page-locked host memory, asking for it to be mapped
  // into the device's address space (unified addressing maps every pinned allocation anyway, but
  // say what the stage relies on); report failures with CUDA_CHECK.
  COURSE_TODO();
  // EXERCISE END
  return p;
}

void mapped_release(float *p) {
  // EXERCISE BEGIN: give the mapped memory back.
  COURSE_TODO();
  // EXERCISE END
}

void saxpy_streamed(float *h_out, const float *h_x, const float *h_y, std::size_t n, float alpha,
                    streaming::host_context &ctx) {
  // EXERCISE BEGIN: run streaming::launch_saxpy directly on the three host arrays (they point into
  // mapped allocations, at any offset): the kernel needs the device's addresses for them. Then
  // make sure the results have arrived in h_out before you return.
  COURSE_TODO();
  // EXERCISE END
}

}  // namespace

STREAMING_HOST_STAGE(saxpy_streamed, mapped_alloc, mapped_release, course::host_memory::mapped,
                     "mapped pinned memory (stream4Mapped, 11.4)");
