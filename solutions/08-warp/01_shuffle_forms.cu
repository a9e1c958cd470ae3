// SPDX-License-Identifier: BSD-3-Clause
// Stage 01: the shuffle forms. After the article "CUDA编程---线程束洗牌指令" (warp shuffle
// instructions: its broadcast, shift up, shift down, wrap-around and butterfly kernels) and The
// CUDA Handbook 8.6.1.
//
// A shuffle lets a lane read another lane's register without going through memory. There are
// four instructions: read a given lane (idx: broadcast, and rotate when each lane names its
// neighbour with wrap-around), read `delta` lanes below (up) or above (down), read lane ^ mask
// (butterfly). With `width` < 32 the warp is cut into segments of width lanes, each shuffling
// on its own; a lane's id within its segment is lane % width.
//
// What changed from the article: the intrinsics are the _sync ones. Since Volta the lanes of a
// warp are scheduled independently and need not be converged, so a shuffle names the lanes that
// take part (the mask); every lane in the mask must execute the same shuffle, and reading a lane
// outside the mask gives an undefined value. The test checks each form, width and offset against
// a host model of the warp (warp_model.h), partial masks included.
//
// What to look for in SASS (`make sass STAGE=08-warp/01_shuffle_forms`): one SHFL per form, with
// its mode (SHFL.IDX for broadcast and rotate, SHFL.UP, SHFL.DOWN, SHFL.BFLY). The width and the
// clamp travel as one operand, ((32 - width) << 8) | clamp: it keeps idx inside the segment and
// leaves up, down and butterfly a lane's own value where the source falls outside it. A mask known
// only at run time makes the compiler put a WARPSYNC before a shuffle, or a convergence test and
// a second copy of it for a warp whose lanes have split. The lane id is S2R SR_LANEID when read
// from the hardware; computed as linear % 32 on a signed int it takes a few integer instructions.
// The same shuffled() runs on floats and doubles (the intrinsics are overloaded): a float is one
// SHFL like an int (the article: 4 bytes move per thread), a double two, one per 32-bit half.
// Compare shuffle_kernel<int>, <float> and <double>.
#include "warp_launch.cuh"

namespace {

// The value this lane receives in shuffle c. Every lane of c.mask calls it with the same c.
template <class T>
__device__ T shuffled(const warp::shuffle_case &c, T v, int lane) {
  // EXERCISE BEGIN: return v as read by this lane in each form of warp::shuffle_form (see warp.h),
  // with c.mask, c.arg and c.width. Rotate is a broadcast whose source is this lane's position in
  // its segment plus c.arg; the shuffle wraps a source outside [0, width) into the segment.
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
  // EXERCISE BEGIN: fill in id.lane, id.warp, id.segment and id.seg_lane for a two-dimensional
  // block. Warps are cut from the block's threads in linear order, threadIdx.x fastest.
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

WARP_STAGE(shuffle_stage, "shuffle forms: broadcast, up, down, rotate, butterfly (8.6.1)", shuffle<int>, thread_ids,
           shuffle<float>, shuffle<double>);
