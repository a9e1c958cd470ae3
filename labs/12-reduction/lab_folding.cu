// SPDX-License-Identifier: BSD-3-Clause
// Lab: pairwise against interleaved folding (The CUDA Handbook 12.1, figure 12.1). Not a stage and
// not an exercise: the benchmark times these kernels beside the stages (its "lab" table), and
// chapters/12-reduction/notes.md reads the result. Read it after stage 01, whose fold and load
// loop are the interleaved forms below.
//
// The book: the pairwise formulation "is intuitive and needs only O(lg N) steps, but performs
// poorly in CUDA": in global memory one thread reading neighbouring elements makes uncoalesced
// transactions, in shared memory the pattern causes bank conflicts; interleaving (by
// blockDim.x * gridDim.x in global memory, by a stride that keeps neighbouring threads active in
// shared memory) does better.
//
// The stages' folds run once per block and never show in their timings, so the shared-memory
// kernels here fold the same 256 values many times per block, which makes the fold the whole
// cost. Three forms of one log-step tree, 8 steps of one __syncthreads() each:
//   pairwise_divergent: step s (1, 2, 4, ...): thread t with t % 2s == 0 adds slot t + s into t.
//     Figure 12.1's pairwise adds. The active threads are spread out, so every warp stays busy
//     (diverged) for the first five steps; within a warp its active lanes touch slots 2s apart
//     inside one run of 32 slots, each in a bank of its own: no bank conflict.
//   pairwise_strided: the same adds, done by threads 0, 1, 2, ... (thread t works on slot 2st).
//     The active threads are packed, but a warp's lanes touch slots 2s apart across the array:
//     from step 1 to step 128, 2, 4, 8, 8, 8, 4, 2 and 1 lanes share a bank (fewer lanes are
//     active as the steps go on), and an n-way conflict takes n shared-memory wavefronts.
//   interleaved: step s (128, 64, ...): thread t < s adds slot t + s into t (stage 01's fold):
//     packed threads, consecutive slots, one wavefront per access.
// Counted from the code, both pairwise forms need the same number of wavefronts per fold, three
// times the interleaved form's; the divergent form spreads them over more warps and instructions,
// the strided form over fewer instructions with conflicts. The chapter's profiles.md ("Lab: figure
// 12.1") has the counts and the ncu command that measures them.
// And the global side: the same sum, each thread reading a contiguous run of about n / threads
// ints (each load of a warp touches 32 different 128-byte lines, one 32-byte sector of each),
// against the grid-stride loop of every stage (each load of a warp fills one line). The warp's
// sum that follows both is cooperative_groups::reduce, a library call: stage 09 is where you
// write one.
#include "lab_folding.h"

#include "common/check.h"
#include "common/launch.h"

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

namespace reduction {
namespace lab {

namespace {

namespace cg = cooperative_groups;
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

// The warp's sum of v, in every lane (the library's; stage 09 teaches how it is done).
__device__ int warp_sum(int v) {
  const auto warp = cg::tiled_partition<32>(cg::this_thread_block());
  return cg::reduce(warp, v, cg::plus<int>());
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
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(blockDim.x) * gridDim.x)
    sum += in[i];
  sum = warp_sum(sum);
  if (threadIdx.x % 32 == 0) atomicAdd(answer, sum);
}

template <class Kernel>
void launch_resident(Kernel kernel, int *d_answer, const int *d_in, std::size_t n,
                     cudaStream_t stream) {
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
