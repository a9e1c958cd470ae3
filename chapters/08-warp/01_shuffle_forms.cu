// SPDX-License-Identifier: BSD-3-Clause
// Stage 01: the shuffle forms. After the article "CUDA编程---线程束洗牌指令" (warp shuffle
// instructions: its broadcast, shift up, shift down, wrap-around and butterfly kernels) and The
// CUDA Handbook 8.6.1.
//
// A shuffle lets a lane read another lane's register without going through memory; with a width
// below 32 the warp is cut into segments that shuffle on their own. The task: each warp does one
// shuffle case (warp.h: a form, an argument, a width, a mask), and each thread of a 2D block works
// out who it is: its lane, its warp, its segment and its lane within the segment.
//
// Watch for: the article's intrinsics have no mask and no longer compile for Volta and later.
// The _sync forms take the mask of the lanes that take part: every lane in it must execute the
// same shuffle, and a lane that reads one outside it gets an undefined value (the tests leave
// those lanes unchecked). Rotate wraps round at the segment's end; up and down do not.
//
// Then read your SASS (`make sass STAGE=exercise/08-warp/01_shuffle_forms`): which SHFL mode does
// each form become, where do the width and the mask go, and what do floats and doubles cost
// against ints?
#include "warp_launch.cuh"

namespace {

// The value this lane receives in shuffle c. Every lane of c.mask calls it with the same c.
template <class T>
__device__ T shuffled(const warp::shuffle_case &c, T v, int lane) {
  // EXERCISE BEGIN: return v as this lane receives it in shuffle case c: its form (warp.h says what
  // each reads), with c.mask, c.arg and c.width.
  COURSE_TODO();
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
  COURSE_TODO();
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
