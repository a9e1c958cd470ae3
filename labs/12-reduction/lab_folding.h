// SPDX-License-Identifier: BSD-3-Clause
// Lab (not a stage): pairwise against interleaved folding, The CUDA Handbook 12.1, figure 12.1.
// The benchmark times these next to the stages; nothing here is an exercise. lab_folding.cu says
// what each kernel does and what to expect.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace reduction {
namespace lab {

// The block fold in shared memory, B = 256 threads, three ways (figure 12.1's pairwise tree in
// two forms, and its interleaved one). Each block loads its 256 ints of in[0, blocks * 256) once,
// then folds them `reps` times (the r-th time with r added to every value, so no fold can be
// skipped); *d_answer = reps * sum(in[0, blocks * 256)) + blocks * 256 * reps * (reps - 1) / 2, mod
// 2^32.
enum class fold { pairwise_divergent, pairwise_strided, interleaved };
constexpr int fold_threads = 256;
const char *name(fold f);
void fold_many(fold f, int *d_answer, const int *d_in, int blocks, int reps, cudaStream_t stream);

// Reading global memory two ways: each thread sums a contiguous run of about n / threads ints
// (figure 12.1's pairwise order, one thread per neighbourhood), or the grid-stride order of every
// stage (interleaved by blockDim.x * gridDim.x). *d_answer = sum(in[0, n)) mod 2^32.
void sum_contiguous_runs(int *d_answer, const int *d_in, std::size_t n, cudaStream_t stream);
void sum_grid_stride(int *d_answer, const int *d_in, std::size_t n, cudaStream_t stream);

}  // namespace lab
}  // namespace reduction
