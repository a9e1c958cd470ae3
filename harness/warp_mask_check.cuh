// SPDX-License-Identifier: BSD-3-Clause
// Checked warp intrinsics, for tests only. Force-included (nvcc --pre-include) into a separate,
// mask-checked compile of a stage (cmake/CourseWarpMasks.cmake), never into the objects that the
// plain tests, the benchmarks and the SASS tools use. After the CUDA headers have declared the
// intrinsics, a macro per intrinsic sends every later call through a wrapper that tests the rules
// of the _sync intrinsics (CUDA C++ Programming Guide, warp vote, match, reduce and shuffle
// functions, and __syncwarp; PTX ISA, shfl.sync, vote.sync, bar.warp.sync):
//   - the calling lane must be named in the mask;
//   - a shuffle reads a defined value only from a lane that takes part (named in the mask and not
//     exited); where the source falls outside the lane's segment it keeps its own, which is fine;
//   - a shuffle's width is a power of two in 1..32;
//   - the lanes named in a mask call the same intrinsic with that same mask (checked by a probe:
//     a ballot and two shuffles among the lanes of the mask, valid whenever the code is);
// records the first violation of each kind with its file and line (harness/warp_mask_check.h
// reads them), and then makes the real call, so a correct stage computes what it computes
// unchecked (an incorrect one may compute something else: its calls are undefined either way).
//
// What it cannot see: a lane named in the mask that skips the call (the others wait for it; if it
// exits later they go on, and the call looks the same as one whose lane had exited before it,
// which is legal; if it never exits, a hang, which the test main's watchdog turns into a failure);
// races through shared or global memory (racecheck sees the shared ones); a mask that is valid
// but not the one the algorithm needs (the results show that, or nothing does); code the tests do
// not run. Shared-memory poisoning (poison_shared_memory) is best effort.
//
// Exactly one translation unit per program may include this file: it defines the record, the
// host functions of warp_mask_check.h and their two kernels.
#pragma once

// Everything that declares the intrinsics (or overloads of them) comes first: a macro defined
// before a declaration would rename the declared function.
#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "harness/warp_mask_check.h"

#include <stdexcept>
#include <string>

namespace course {
namespace warpcheck {

static __device__ record device_record;

namespace detail {

enum intrinsic_id : int {
  id_shfl = 1,
  id_shfl_up,
  id_shfl_down,
  id_shfl_xor,
  id_ballot,
  id_any,
  id_all,
  id_uni,
  id_syncwarp,
  id_match_any,
  id_match_all,
  id_reduce_add,
  id_reduce_min,
  id_reduce_max,
  id_reduce_and,
  id_reduce_or,
  id_reduce_xor
};

__device__ inline const char *name_of(int id) {
  switch (id) {
    case id_shfl: return "__shfl_sync";
    case id_shfl_up: return "__shfl_up_sync";
    case id_shfl_down: return "__shfl_down_sync";
    case id_shfl_xor: return "__shfl_xor_sync";
    case id_ballot: return "__ballot_sync";
    case id_any: return "__any_sync";
    case id_all: return "__all_sync";
    case id_uni: return "__uni_sync";
    case id_syncwarp: return "__syncwarp";
    case id_match_any: return "__match_any_sync";
    case id_match_all: return "__match_all_sync";
    case id_reduce_add: return "__reduce_add_sync";
    case id_reduce_min: return "__reduce_min_sync";
    case id_reduce_max: return "__reduce_max_sync";
    case id_reduce_and: return "__reduce_and_sync";
    case id_reduce_or: return "__reduce_or_sync";
    case id_reduce_xor: return "__reduce_xor_sync";
    default: return "?";
  }
}

__device__ inline int lane_id() {
  int lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

// The end of `from` (its last cap - 1 characters), terminated.
__device__ inline void copy_text(char *to, int cap, const char *from) {
  int len = 0;
  while (from[len]) ++len;
  const int start = len > cap - 1 ? len - (cap - 1) : 0;
  int k = 0;
  for (; from[start + k] && k < cap - 1; ++k) to[k] = from[start + k];
  to[k] = '\0';
}

struct details {
  unsigned mask;
  int other_lane = -1;
  unsigned other_mask = 0;
  int width = 0;
  int other_id = 0;
};

__device__ inline void note(kind k, int id, const char *file, int line, const details &d) {
  violation &v = device_record.v[k];
  if (atomicAdd(&v.count, 1u) != 0) return;  // the first one is kept
  v.line = line;
  v.mask = d.mask;
  v.lane = lane_id();
  v.other_lane = d.other_lane;
  v.other_mask = d.other_mask;
  v.width = d.width;
  v.block[0] = blockIdx.x, v.block[1] = blockIdx.y, v.block[2] = blockIdx.z;
  v.thread[0] = threadIdx.x, v.thread[1] = threadIdx.y, v.thread[2] = threadIdx.z;
  copy_text(v.intrinsic, int(sizeof v.intrinsic), name_of(id));
  copy_text(v.other_intrinsic, int(sizeof v.other_intrinsic),
            d.other_id ? name_of(d.other_id) : "");
  copy_text(v.file, int(sizeof v.file), file);
  __threadfence();
}

}  // namespace detail

// One call site: the macros below turn `__shfl_sync(...)` into `site(__FILE__,
// __LINE__).shfl_sync(...)`.
struct site {
  const char *file;
  int line;
  __device__ site(const char *f, int l) : file(f), line(l) {}

  // Whether this lane is in the mask (recorded if not); if it is, the probe among the mask's lanes.
  // Returns the lanes taking part: those of the mask that have not exited (0 if this lane is out).
  __device__ unsigned enter(int id, unsigned mask) const {
    const int lane = detail::lane_id();
    detail::details d{mask};
    if (!(mask >> lane & 1u)) {
      detail::note(caller_outside_mask, id, file, line, d);
      return 0u;
    }
    // Every non-exited lane of a valid mask is here (or at another call of the same intrinsic
    // with the same mask), so this ballot, and the shuffles from its lowest lane, are valid.
    const unsigned taking_part = ::__ballot_sync(mask, 1);
    const int leader = __ffs(taking_part) - 1;
    const unsigned leader_mask = ::__shfl_sync(mask, mask, leader);
    const int leader_id = ::__shfl_sync(mask, id, leader);
    if (leader_mask != mask || leader_id != id) {
      d.other_lane = leader;
      d.other_mask = leader_mask;
      d.other_id = leader_id;
      detail::note(lanes_disagree, id, file, line, d);
    }
    return taking_part;
  }

  // A shuffle: the source lane this lane reads (the PTX ISA's shfl.sync: the source wraps inside
  // the segment for idx; up, down and bfly fall back to the lane's own value outside it).
  __device__ void shuffle(int id, unsigned mask, int arg, int width) const {
    const unsigned taking_part = enter(id, mask);
    if (!taking_part) return;
    detail::details d{mask};
    if (width < 1 || width > 32 || (width & (width - 1)) != 0) {
      d.width = width;
      detail::note(bad_width, id, file, line, d);
      return;
    }
    const int lane = detail::lane_id();
    const int first = lane & ~(width - 1), last = first + width - 1;
    const int b = arg & 31;  // the instruction takes the low five bits
    int source = lane;
    switch (id) {
      case detail::id_shfl: source = first | (b & (width - 1)); break;
      case detail::id_shfl_up: source = lane - b >= first ? lane - b : lane; break;
      case detail::id_shfl_down: source = lane + b <= last ? lane + b : lane; break;
      case detail::id_shfl_xor: source = (lane ^ b) <= last ? (lane ^ b) : lane; break;
      default: break;
    }
    if (source != lane && !(taking_part >> source & 1u)) {
      d.other_lane = source;
      d.other_mask = taking_part;
      d.width = width;
      detail::note(source_not_taking_part, id, file, line, d);
    }
  }

  template <class T>
  __device__ auto shfl_sync(unsigned mask, T var, int src, int width = 32) const
      -> decltype(::__shfl_sync(mask, var, src, width)) {
    shuffle(detail::id_shfl, mask, src, width);
    return ::__shfl_sync(mask, var, src, width);
  }
  template <class T>
  __device__ auto shfl_up_sync(unsigned mask, T var, unsigned delta, int width = 32) const
      -> decltype(::__shfl_up_sync(mask, var, delta, width)) {
    shuffle(detail::id_shfl_up, mask, int(delta), width);
    return ::__shfl_up_sync(mask, var, delta, width);
  }
  template <class T>
  __device__ auto shfl_down_sync(unsigned mask, T var, unsigned delta, int width = 32) const
      -> decltype(::__shfl_down_sync(mask, var, delta, width)) {
    shuffle(detail::id_shfl_down, mask, int(delta), width);
    return ::__shfl_down_sync(mask, var, delta, width);
  }
  template <class T>
  __device__ auto shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = 32) const
      -> decltype(::__shfl_xor_sync(mask, var, lane_mask, width)) {
    shuffle(detail::id_shfl_xor, mask, lane_mask, width);
    return ::__shfl_xor_sync(mask, var, lane_mask, width);
  }

  __device__ unsigned ballot_sync(unsigned mask, int pred) const {
    enter(detail::id_ballot, mask);
    return ::__ballot_sync(mask, pred);
  }
  __device__ int any_sync(unsigned mask, int pred) const {
    enter(detail::id_any, mask);
    return ::__any_sync(mask, pred);
  }
  __device__ int all_sync(unsigned mask, int pred) const {
    enter(detail::id_all, mask);
    return ::__all_sync(mask, pred);
  }
  __device__ int uni_sync(unsigned mask, int pred) const {
    enter(detail::id_uni, mask);
    return ::__uni_sync(mask, pred);
  }
  __device__ void syncwarp(unsigned mask = 0xffffffffu) const {
    enter(detail::id_syncwarp, mask);
    ::__syncwarp(mask);
  }

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 700
  template <class T>
  __device__ auto match_any_sync(unsigned mask, T value) const
      -> decltype(::__match_any_sync(mask, value)) {
    enter(detail::id_match_any, mask);
    return ::__match_any_sync(mask, value);
  }
  template <class T>
  __device__ auto match_all_sync(unsigned mask, T value, int *pred) const
      -> decltype(::__match_all_sync(mask, value, pred)) {
    enter(detail::id_match_all, mask);
    return ::__match_all_sync(mask, value, pred);
  }
#endif
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  template <class T>
  __device__ auto reduce_add_sync(unsigned mask, T value) const
      -> decltype(::__reduce_add_sync(mask, value)) {
    enter(detail::id_reduce_add, mask);
    return ::__reduce_add_sync(mask, value);
  }
  template <class T>
  __device__ auto reduce_min_sync(unsigned mask, T value) const
      -> decltype(::__reduce_min_sync(mask, value)) {
    enter(detail::id_reduce_min, mask);
    return ::__reduce_min_sync(mask, value);
  }
  template <class T>
  __device__ auto reduce_max_sync(unsigned mask, T value) const
      -> decltype(::__reduce_max_sync(mask, value)) {
    enter(detail::id_reduce_max, mask);
    return ::__reduce_max_sync(mask, value);
  }
  __device__ unsigned reduce_and_sync(unsigned mask, unsigned value) const {
    enter(detail::id_reduce_and, mask);
    return ::__reduce_and_sync(mask, value);
  }
  __device__ unsigned reduce_or_sync(unsigned mask, unsigned value) const {
    enter(detail::id_reduce_or, mask);
    return ::__reduce_or_sync(mask, value);
  }
  __device__ unsigned reduce_xor_sync(unsigned mask, unsigned value) const {
    enter(detail::id_reduce_xor, mask);
    return ::__reduce_xor_sync(mask, value);
  }
#endif
};

// ---- the host side (warp_mask_check.h) --------------------------------------------------------

namespace detail {

inline void check(cudaError_t status, const char *what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string("warp mask check: ") + what +
                             " failed: " + cudaGetErrorString(status));
}

__global__ void poison_shared_kernel(int value, int words) {
  extern __shared__ int shared_words[];
  volatile int *sh = shared_words;  // stores nothing reads: volatile, so they are made
  for (int i = threadIdx.x; i < words; i += blockDim.x) sh[i] = value;
}

__global__ void read_unwritten_shared_kernel(int *out) {
  __shared__ int unwritten[1024];
  const volatile int *sh = unwritten;
  out[threadIdx.x] = sh[threadIdx.x];
}

}  // namespace detail

record take() {
  detail::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  record r{};
  detail::check(cudaMemcpyFromSymbol(&r, device_record, sizeof r), "reading the record");
  const record zero{};
  detail::check(cudaMemcpyToSymbol(device_record, &zero, sizeof zero), "clearing the record");
  return r;
}

void poison_shared_memory(int value) {
  int device = 0, sms = 0, bytes = 0;
  detail::check(cudaGetDevice(&device), "cudaGetDevice");
  detail::check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
                "the SM count");
  detail::check(cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
                "the shared memory size");
  detail::check(cudaFuncSetAttribute(detail::poison_shared_kernel,
                                     cudaFuncAttributeMaxDynamicSharedMemorySize, bytes),
                "cudaFuncSetAttribute");
  // One block fills an SM's shared memory; twice as many blocks as SMs, so every SM gets one.
  detail::poison_shared_kernel<<<2 * sms, 1024, bytes>>>(value, bytes / int(sizeof(int)));
  detail::check(cudaGetLastError(), "the poison kernel's launch");
  detail::check(cudaDeviceSynchronize(), "the poison kernel");
}

bool shared_memory_keeps_poison(int value) {
  poison_shared_memory(value);
  int *d = nullptr;
  detail::check(cudaMalloc(&d, 1024 * sizeof(int)), "cudaMalloc");
  detail::read_unwritten_shared_kernel<<<1, 1024>>>(d);
  int h[1024];
  const cudaError_t launched = cudaGetLastError();
  const cudaError_t copied = cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  cudaFree(d);
  detail::check(launched, "the reading kernel's launch");
  detail::check(copied, "the reading kernel");
  for (int v : h)
    if (v != value) return false;
  return true;
}

}  // namespace warpcheck
}  // namespace course

// From here on, the calls of the translation unit go through the checks. Object-like macros: the
// arguments (and the default ones: the width, __syncwarp's mask) stay those of the call. No comma
// outside parentheses, so a call inside another macro's arguments stays one argument.
#define __shfl_sync ::course::warpcheck::site(__FILE__, __LINE__).shfl_sync
#define __shfl_up_sync ::course::warpcheck::site(__FILE__, __LINE__).shfl_up_sync
#define __shfl_down_sync ::course::warpcheck::site(__FILE__, __LINE__).shfl_down_sync
#define __shfl_xor_sync ::course::warpcheck::site(__FILE__, __LINE__).shfl_xor_sync
#define __ballot_sync ::course::warpcheck::site(__FILE__, __LINE__).ballot_sync
#define __any_sync ::course::warpcheck::site(__FILE__, __LINE__).any_sync
#define __all_sync ::course::warpcheck::site(__FILE__, __LINE__).all_sync
#define __uni_sync ::course::warpcheck::site(__FILE__, __LINE__).uni_sync
#define __syncwarp ::course::warpcheck::site(__FILE__, __LINE__).syncwarp
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 700
#define __match_any_sync ::course::warpcheck::site(__FILE__, __LINE__).match_any_sync
#define __match_all_sync ::course::warpcheck::site(__FILE__, __LINE__).match_all_sync
#endif
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
#define __reduce_add_sync ::course::warpcheck::site(__FILE__, __LINE__).reduce_add_sync
#define __reduce_min_sync ::course::warpcheck::site(__FILE__, __LINE__).reduce_min_sync
#define __reduce_max_sync ::course::warpcheck::site(__FILE__, __LINE__).reduce_max_sync
#define __reduce_and_sync ::course::warpcheck::site(__FILE__, __LINE__).reduce_and_sync
#define __reduce_or_sync ::course::warpcheck::site(__FILE__, __LINE__).reduce_or_sync
#define __reduce_xor_sync ::course::warpcheck::site(__FILE__, __LINE__).reduce_xor_sync
#endif
