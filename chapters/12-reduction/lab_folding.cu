// SPDX-License-Identifier: BSD-3-Clause
// Lab: pairwise against interleaved folding (The CUDA Handbook 12.1, figure 12.1). The book: the
// pairwise formulation "is intuitive and needs only O(lg N) steps, but performs poorly in CUDA":
// in global memory one thread reading neighbouring elements makes uncoalesced transactions, in
// shared memory the pattern causes bank conflicts; interleaving (by blockDim.x * gridDim.x in
// global memory, by a stride that keeps neighbouring threads active in shared memory) does better.
//
// The stages' folds run once per block and never show in their timings (README), so the shared
// memory kernels here fold the same 256 values many times per block, which makes the fold the
// whole cost. Three forms of one log-step tree, 8 steps of one __syncthreads() each:
//   pairwise_divergent: step s (1, 2, 4, ...): thread t with t % 2s == 0 adds slot t + s into t.
//     The adds are figure 12.1's pairwise ones; the active threads spread out, so every warp
//     stays busy (diverged) for the first five steps, and no warp retires early.
//   pairwise_strided: the same adds, done by threads 0, 1, 2, ... (thread t works on slot 2st):
//     the active threads are packed, but the lanes of a warp touch slots 2s apart, a 2-, 4-, ...
//     32-way bank conflict per access.
//   interleaved: step s (128, 64, ...): thread t < s adds slot t + s into t (stage 01's fold):
//     packed threads, consecutive slots, no conflict.
// And the global side: the same sum, each thread reading a contiguous run of the input, against
// the grid-stride loop of every stage. What to look for: the ratios in the benchmark's "lab"
// table. On the H100 (2026-11-23, two runs, 256 threads) the divergent pairwise fold ran at 0.98x
// the interleaved one, the bank-conflicted one at 0.72x, and the contiguous runs per thread at
// 0.66x the grid-stride loop's GB/s (run B: 1508 against 2285). Timed only: no ncu capture of it.
#include "lab_folding.h"

#include "common/check.h"
#include "common/launch.h"

namespace reduction {
namespace lab {

namespace {

constexpr unsigned B = fold_threads;

template <fold F>
__global__ void fold_kernel(int *answer, const int *in, int reps) {
  __shared__ int partials[B];
  const unsigned tid = threadIdx.x;
  const int v = in[blockIdx.x * B + tid];
  int acc = 0;  // meaningful in thread 0
  for (int r = 0; r < reps; ++r) {
    partials[tid] = v + r;
    __syncthreads();
    if constexpr (F == fold::pairwise_divergent) {
      for (unsigned s = 1; s < B; s *= 2) {
        if (tid % (2 * s) == 0) partials[tid] += partials[tid + s];
        __syncthreads();
      }
    } else if constexpr (F == fold::pairwise_strided) {
      for (unsigned s = 1; s < B; s *= 2) {
        const unsigned slot = 2 * s * tid;
        if (slot < B) partials[slot] += partials[slot + s];
        __syncthreads();
      }
    } else {
      for (unsigned s = B / 2; s > 0; s /= 2) {
        if (tid < s) partials[tid] += partials[tid + s];
        __syncthreads();
      }
    }
    if (tid == 0) acc += partials[0];
    __syncthreads();  // partials[0] read before the next round overwrites it
  }
  if (tid == 0) atomicAdd(answer, acc);
}

__device__ int warp_sum(int v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__global__ void contiguous_runs_kernel(int *answer, const int *in, std::size_t n) {
  const std::size_t threads = std::size_t(blockDim.x) * gridDim.x;
  const std::size_t run = (n + threads - 1) / threads;
  const std::size_t t = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  const std::size_t begin = t * run < n ? t * run : n, end = begin + run < n ? begin + run : n;
  int sum = 0;
  for (std::size_t i = begin; i < end; ++i) sum += in[i];
  sum = warp_sum(sum);
  if (threadIdx.x % 32 == 0) atomicAdd(answer, sum);
}

__global__ void grid_stride_kernel(int *answer, const int *in, std::size_t n) {
  int sum = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(blockDim.x) * gridDim.x)
    sum += in[i];
  sum = warp_sum(sum);
  if (threadIdx.x % 32 == 0) atomicAdd(answer, sum);
}

template <class Kernel>
void launch_resident(Kernel kernel, int *d_answer, const int *d_in, std::size_t n, cudaStream_t stream) {
  CUDA_CHECK(cudaMemsetAsync(d_answer, 0, sizeof(int), stream));
  const int threads = 256;
  kernel<<<course::resident_blocks(kernel, threads), threads, 0, stream>>>(d_answer, d_in, n);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

const char *name(fold f) {
  switch (f) {
    case fold::pairwise_divergent: return "pairwise, t % 2s (divergent)";
    case fold::pairwise_strided: return "pairwise, slot 2st (bank conflicts)";
    case fold::interleaved: return "interleaved, t < s";
  }
  return "?";
}

void fold_many(fold f, int *d_answer, const int *d_in, int blocks, int reps, cudaStream_t stream) {
  CUDA_CHECK(cudaMemsetAsync(d_answer, 0, sizeof(int), stream));
  switch (f) {
    case fold::pairwise_divergent:
      fold_kernel<fold::pairwise_divergent><<<blocks, B, 0, stream>>>(d_answer, d_in, reps);
      break;
    case fold::pairwise_strided:
      fold_kernel<fold::pairwise_strided><<<blocks, B, 0, stream>>>(d_answer, d_in, reps);
      break;
    case fold::interleaved:
      fold_kernel<fold::interleaved><<<blocks, B, 0, stream>>>(d_answer, d_in, reps);
      break;
  }
  CUDA_CHECK_LAUNCH();
}

void sum_contiguous_runs(int *d_answer, const int *d_in, std::size_t n, cudaStream_t stream) {
  launch_resident(contiguous_runs_kernel, d_answer, d_in, n, stream);
}

void sum_grid_stride(int *d_answer, const int *d_in, std::size_t n, cudaStream_t stream) {
  launch_resident(grid_stride_kernel, d_answer, d_in, n, stream);
}

}  // namespace lab
}  // namespace reduction
