// SPDX-License-Identifier: BSD-3-Clause
// Stage 03: SAXPY on float4 vectors, unrolled by n. Beyond the book.
//
// Changes from stage 02: the unit of work is a float4 (16 bytes) instead of a float, so each
// load instruction moves four times the bytes: 4x fewer memory instructions for the same
// traffic, and 4x the bytes in flight per thread for the same unroll. On GK104 the book's lever
// was unrolling; Hopper's memory system wants far more bytes in flight (about 3 TB/s x ~700 ns of
// latency, some 2 MB across the chip). Measured on the H100 (2026-11-23) the two levers are of a
// size: in the progression unrolling gained 2.2% over stage 01 and float4 3.2% over stage 02
// (run A: 4% and 2%). The last N % 4 floats are done one per thread. float4 accesses must be
// 16-byte aligned: cudaMalloc gives 256, and the stage refuses other pointers rather than fault.
// What to look for: LDG.E.128 / STG.E.128 in the SASS instead of LDG.E; the benchmark's GB/s
// against the device-to-device copy ceiling and cuBLAS. H100, 2026-11-23: 2902 GB/s at 512
// threads x 12, 96.9% of the copy and 1.068x cublasSaxpy (run A 2897 GB/s at 32 threads x 6,
// 97.3%, 1.067x; interleaved with cuBLAS, 1.07-1.08x in both runs), with a flat block size x unroll
// table (2850-2903 GB/s, run A 2849-2902). Nsight Compute: 512 bytes per load request instead of
// 128, a third of stage 02's warp instructions (103.2M -> 33.2M), DRAM unchanged (87.2% -> 86.9%).
#include "streaming_launch.cuh"

#include <cstdint>
#include <stdexcept>

namespace {

template <int n>
__global__ void saxpy_kernel(float *out, const float *x, const float *y, std::size_t N, float alpha) {
  // EXERCISE BEGIN: as stage 02, over the N / 4 whole float4 vectors of out, x and y (reinterpret
  // the pointers); then the last N % 4 floats, one per thread of the grid.
  COURSE_TODO();
  // EXERCISE END
}

bool aligned16(const void *p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

void saxpy(float *out, const float *x, const float *y, std::size_t n, float alpha, const streaming::launch_config &cfg,
           cudaStream_t stream) {
  if (n == 0) return;
  // EXERCISE BEGIN: the float4 path faults on an address that is not a multiple of 16 bytes, and
  // callers may pass any float pointer (the tests misalign each array on its own): refuse, with
  // std::invalid_argument and before anything is launched, every call the kernel cannot take.
  COURSE_TODO();
  // EXERCISE END
  streaming::dispatch_unroll(cfg.unroll, [&](auto unroll) {
    streaming::launch(saxpy_kernel<decltype(unroll)::value>, cfg, stream, out, x, y, n, alpha);
  });
}

}  // namespace

STREAMING_DEVICE_STAGE(saxpy, true, "float4 vectors, unrolled (beyond the book)");
