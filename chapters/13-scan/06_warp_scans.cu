// SPDX-License-Identifier: BSD-3-Clause
// Stage 06: warp scans. The CUDA Handbook 13.5 (listings 13.13 .. 13.18).
//
// The task: 13.5 writes the warp scan four ways: the conditional form you wrote in stage 02
// (13.13), a zero-padded form that needs no guard (13.14), one template for both (13.15/16), and
// the shuffle, which needs no shared memory at all (13.17, in inline PTX). You write the shuffle
// scan and the block scan on it (13.18) in lesson_warp_block_scan.cuh, and here the zero-padded
// form, the templated form and one step of the PTX form. Each form runs on its own over 32-element
// segments and k times over in a compute-bound lab, so you can compare them. Book section: 13.5.4
// counts 30 / 17 / 11 instructions on SM 3.0 and measured the shuffle about 2x the conditional
// form. Watch for: lanes no longer run in lock-step (your scan_warp's __syncwarp() discipline holds
// here too); the PTX shuffle takes a member mask; and what each form costs in shared-memory
// accesses, not only in instructions (make sass-diff, and the lab's table).
#include "lesson_two_level_vec4.cuh"
#include "lesson_warp_block_scan.cuh"

namespace {

constexpr unsigned warps_per_block = 8;
constexpr unsigned pad = 16;  // zeros below each warp's 32 slots in the zero-padded forms

// 13-14. sh: this warp's pad + 32 ints; sh[0, pad) hold zeros, so lane - offset needs no guard.
__device__ int warp_scan_zero_padded(int *sh, int x, unsigned lane) {
  // EXERCISE BEGIN: the zero-padded warp scan (13-14): scan_warp's result without a per-lane guard,
  // the zeros below the warp's slots standing in for lanes that do not exist (lane and offset are
  // unsigned: index so that no subscript goes negative).
  COURSE_TODO();
  // EXERCISE END
}

// 13-15/13-16: one template for both forms, as the book's bZeroPad template argument chooses.
template <bool zero_padded>
__device__ int warp_scan_templated(int *sh, int x, unsigned lane) {
  // EXERCISE BEGIN: one body for the conditional and the zero-padded warp scans, the template
  // argument choosing at compile time (13-16); the course builds and judges its zero-padded one.
  COURSE_TODO();
  // EXERCISE END
}

// 13-17: the shuffle's predicate p is false where lane - offset < 0; the add is skipped there.
__device__ int warp_scan_ptx(int x) {
#pragma unroll
  for (unsigned offset = 1; offset < 32; offset *= 2) {
    // EXERCISE BEGIN: one step of the warp scan in inline PTX (13-17), the shuffle's own predicate
    // deciding whether this lane adds.
    COURSE_TODO();
    // EXERCISE END
  }
  return x;
}

template <scan::warp_form F>
__device__ int warp_scan_any(int *sh, int x, unsigned lane) {
  if constexpr (F == scan::warp_form::conditional) return scan::scan_warp(sh, x, lane);
  else if constexpr (F == scan::warp_form::zero_padded) return warp_scan_zero_padded(sh, x, lane);
  else if constexpr (F == scan::warp_form::templated) return warp_scan_templated<true>(sh, x, lane);
  else if constexpr (F == scan::warp_form::shuffle) return scan::shfl_warp_scan::inclusive(x, lane);
  else return warp_scan_ptx(x);
}

// The zero-padded forms read the 16 slots below the warp's 32 as zeros. As in the book (listings
// 13.11 and 13.23: sPartials[sIndex-16] = 0 before the loop), each kernel writes them once, not
// every scan: the scan itself then makes no more shared-memory accesses than the conditional form.
template <scan::warp_form F>
__device__ void zero_pad_once(int *sh, unsigned lane) {
  if constexpr (F == scan::warp_form::zero_padded || F == scan::warp_form::templated) {
    if (lane < pad) sh[lane] = 0;
    __syncwarp();
  }
}

// Each warp scans 32-element segments, grid-stride; the loop is the same for the warp's 32 lanes.
template <scan::warp_form F>
__global__ void warp_segments(int *out, const int *in, std::size_t n, bool inclusive) {
  __shared__ int sh[warps_per_block][pad + 32];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  zero_pad_once<F>(sh[warp], lane);
  const std::size_t segments = (n + 31) / 32;
  for (std::size_t seg = blockIdx.x * std::size_t(warps_per_block) + warp; seg < segments;
       seg += std::size_t(gridDim.x) * warps_per_block) {
    const std::size_t i = seg * 32 + lane;
    const int x = i < n ? in[i] : 0;
    const int incl = warp_scan_any<F>(sh[warp], x, lane);
    if (i < n) out[i] = inclusive ? incl : incl - x;
  }
}

template <scan::warp_form F>
void launch_segments(int *d_out, const int *d_in, std::size_t n, bool inclusive,
                     cudaStream_t stream) {
  auto kernel = warp_segments<F>;
  const std::size_t needed = scan::ceil_div(scan::ceil_div(n, 32), warps_per_block);
  const std::size_t resident = std::size_t(course::resident_blocks(kernel, 32 * warps_per_block));
  const unsigned blocks = unsigned(std::max<std::size_t>(1, std::min(needed, resident)));
  kernel<<<blocks, 32 * warps_per_block, 0, stream>>>(d_out, d_in, n, inclusive);
  CUDA_CHECK_LAUNCH();
}

// The compute-bound lab (bench part 3b): each warp scans its 32-element segment
// k times over, each scan's output the next one's input, so that k scans are paid for every
// element loaded and stored and the scan's instructions, not memory, set the time.
template <scan::warp_form F>
__global__ void warp_segments_repeated(int *out, const int *in, std::size_t n, unsigned k) {
  __shared__ int sh[warps_per_block][pad + 32];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  zero_pad_once<F>(sh[warp], lane);
  const std::size_t segments = (n + 31) / 32;
  for (std::size_t seg = blockIdx.x * std::size_t(warps_per_block) + warp; seg < segments;
       seg += std::size_t(gridDim.x) * warps_per_block) {
    const std::size_t i = seg * 32 + lane;
    int x = i < n ? in[i] : 0;
    for (unsigned r = 0; r < k; ++r) x = warp_scan_any<F>(sh[warp], x, lane);
    if (i < n) out[i] = x;
  }
}

template <scan::warp_form F>
void launch_repeated(int *d_out, const int *d_in, std::size_t n, unsigned k, cudaStream_t stream) {
  auto kernel = warp_segments_repeated<F>;
  const std::size_t needed = scan::ceil_div(scan::ceil_div(n, 32), warps_per_block);
  const std::size_t resident = std::size_t(course::resident_blocks(kernel, 32 * warps_per_block));
  const unsigned blocks = unsigned(std::max<std::size_t>(1, std::min(needed, resident)));
  kernel<<<blocks, 32 * warps_per_block, 0, stream>>>(d_out, d_in, n, k);
  CUDA_CHECK_LAUNCH();
}

void warp_scan_lab_entry(int *d_out, const int *d_in, std::size_t n, scan::warp_form form,
                         unsigned k, cudaStream_t stream) {
  if (n == 0) return;
  switch (form) {
    case scan::warp_form::conditional:
      return launch_repeated<scan::warp_form::conditional>(d_out, d_in, n, k, stream);
    case scan::warp_form::zero_padded:
      return launch_repeated<scan::warp_form::zero_padded>(d_out, d_in, n, k, stream);
    case scan::warp_form::templated:
      return launch_repeated<scan::warp_form::templated>(d_out, d_in, n, k, stream);
    case scan::warp_form::shuffle:
      return launch_repeated<scan::warp_form::shuffle>(d_out, d_in, n, k, stream);
    case scan::warp_form::shuffle_ptx:
      return launch_repeated<scan::warp_form::shuffle_ptx>(d_out, d_in, n, k, stream);
  }
  throw std::invalid_argument("unknown warp scan form");
}

void warp_scan_entry(int *d_out, const int *d_in, std::size_t n, scan::warp_form form,
                     bool inclusive, cudaStream_t stream) {
  if (n == 0) return;
  switch (form) {
    case scan::warp_form::conditional:
      return launch_segments<scan::warp_form::conditional>(d_out, d_in, n, inclusive, stream);
    case scan::warp_form::zero_padded:
      return launch_segments<scan::warp_form::zero_padded>(d_out, d_in, n, inclusive, stream);
    case scan::warp_form::templated:
      return launch_segments<scan::warp_form::templated>(d_out, d_in, n, inclusive, stream);
    case scan::warp_form::shuffle:
      return launch_segments<scan::warp_form::shuffle>(d_out, d_in, n, inclusive, stream);
    case scan::warp_form::shuffle_ptx:
      return launch_segments<scan::warp_form::shuffle_ptx>(d_out, d_in, n, inclusive, stream);
  }
  throw std::invalid_argument("unknown warp scan form");
}

template <class T>
void scan_entry(T *d_out, const T *d_in, std::size_t n, bool inclusive, const scan::config &cfg,
                scan::workspace &ws, cudaStream_t stream) {
  scan::with_block_size(cfg.threads, [&](auto b) {
    constexpr unsigned B = decltype(b)::value;
    scan::two_level_scan4<B, scan::warp_block_scan<scan::shfl_warp_scan>>(d_out, d_in, n, inclusive,
                                                                          cfg, ws, stream);
  });
}

}  // namespace

SCAN_STAGE("warp scans; two-level on the shuffle block scan (13.5)", scan_entry<int>,
           scan_entry<float>, true, warp_scan_entry, nullptr, 3, warp_scan_lab_entry);
