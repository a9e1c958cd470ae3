// SPDX-License-Identifier: BSD-3-Clause
// Stage 01: the shuffle forms. After the article "CUDA编程---线程束洗牌指令" (warp shuffle
// instructions) and The CUDA Handbook 8.6.1.
//
// A shuffle lets a lane read another lane's register without going through memory: read a given
// lane (idx: broadcast, or rotate), `delta` lanes below (up) or above (down), or lane ^ mask
// (butterfly); with `width` < 32 each segment of width lanes shuffles on its own. Unlike the
// article, the intrinsics are the _sync ones: since Volta a shuffle names the lanes that take part.
// What to look for (`make sass STAGE=08-warp/01_shuffle_forms`): one SHFL per form with its mode
// (IDX, UP, DOWN, BFLY), width and clamp as one operand, a WARPSYNC or a diverged copy when the
// mask is known only at run time; shuffle_kernel<int>, <float> and <double> (two SHFL per double).
#include "warp_launch.cuh"

namespace {

// The value this lane receives in shuffle c. Every lane of c.mask calls it with the same c.
template <class T>
__device__ T shuffled(const warp::shuffle_case &c, T v, int lane) {
  // EXERCISE BEGIN: return v as this lane receives it in shuffle case c: its form (warp.h says what
  // each reads), with c.mask, c.arg and c.width.
  switch (c.form) {
    case warp::shuffle_form::broadcast: return __shfl_sync(c.mask, v, c.arg, c.width);
    case warp::shuffle_form::up: return __shfl_up_sync(c.mask, v, c.arg, c.width);
    case warp::shuffle_form::down: return __shfl_down_sync(c.mask, v, c.arg, c.width);
    case warp::shuffle_form::rotate: return __shfl_sync(c.mask, v, lane % c.width + c.arg, c.width);
    case warp::shuffle_form::butterfly: return __shfl_xor_sync(c.mask, v, c.arg, c.width);
  }
  // EXERCISE END
  return v;
}

template <class T>
__global__ void shuffle_kernel(T *out, const T *in, const warp::shuffle_case *cases, int n_cases) {
  const std::size_t w = warp::warp_in_grid();
  if (w >= std::size_t(n_cases)) return;
  const warp::shuffle_case c = cases[w];
  const int lane = warp::lane_id();
  const std::size_t i = w * warp::lanes + lane;
  T v = in[i];
  // Lanes outside the mask must not execute the shuffle: they keep their own value.
  if (c.mask >> lane & 1u) v = shuffled(c, v, lane);
  out[i] = v;
}

// %laneid: the hardware's own word on which lane a thread is.
__device__ int hardware_lane() {
  int lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

__global__ void thread_ids_kernel(warp::thread_ids *out, int width) {
  warp::thread_ids id{};
  // EXERCISE BEGIN: fill in id.lane, id.warp, id.segment and id.seg_lane of this thread of a 2D
  // block.
  const int linear = threadIdx.y * blockDim.x + threadIdx.x;
  id.lane = linear % warp::lanes;
  id.warp = linear / warp::lanes;
  id.segment = id.lane / width;
  id.seg_lane = id.lane % width;
  // EXERCISE END
  id.hw_lane = hardware_lane();
  out[threadIdx.y * blockDim.x + threadIdx.x] = id;
}

template <class T>
void shuffle(T *out, const T *in, const warp::shuffle_case *cases, int n_cases) {
  warp::launch_warps(shuffle_kernel<T>, n_cases, out, in, cases, n_cases);
}

void thread_ids(warp::thread_ids *out, int block_x, int block_y, int width) {
  thread_ids_kernel<<<1, dim3(block_x, block_y)>>>(out, width);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

WARP_STAGE(shuffle_stage, "shuffle forms: broadcast, up, down, rotate, butterfly (8.6.1)",
           shuffle<int>, thread_ids, shuffle<float>, shuffle<double>);
