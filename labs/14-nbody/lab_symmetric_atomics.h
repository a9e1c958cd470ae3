// SPDX-License-Identifier: BSD-3-Clause
// Lab (not a stage: no exercise): the naive symmetric form with float atomics, The CUDA Handbook
// 14.1.1 (figure 14.2). lab_symmetric_atomics.cu says what the kernels do and what to expect; the
// benchmark times them beside stage 06 at the same N, test_lab_symmetric_atomics.cpp tests them.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace nbody {
namespace lab {

// In which order a thread meets its pairs (both compute every pair {i, j}, i != j, exactly once).
enum class pair_order {
  // The obvious loop (the book gives no code for this form): thread i takes the pairs (i, j)
  // with j > i, and the lanes of a warp step through j together, so at each step every lane of
  // the warp adds into the same body j (32 atomics on one address at once); thread i does
  // n - 1 - i pairs (a triangle: unbalanced).
  same_j,
  // Thread i takes the pairs (i, i + k mod n) for k = 1 .. (n - 1) / 2, and for an even n the pair
  // (i, i + n / 2) when i < n / 2: about n / 2 pairs per thread, and the lanes of a warp add into
  // 32 different bodies j at each step (no address shared within a warp).
  cyclic,
};
const char *name(pair_order order);

// d_force[i] (x, y, z; w = 0) = sum over j != i of m_j (r_j - r_i) / (|r_j - r_i|^2 +
// softening2)^(3/2), the forces of every stage (nbody.h), from d_body[0, n): each pair computed
// once, its force added to body i and subtracted from body j with float atomicAdd on global memory
// (two vector adds, six atomics, per pair), after a memset of d_force[0, n) in `stream`. The order
// of the additions, and so the last bits of the sums, changes from run to run. threads: 32..1024, a
// multiple of 32 (std::invalid_argument otherwise); softening2 > 0.
void forces_symmetric_atomics(float4 *d_force, const float4 *d_body, std::size_t n,
                              float softening2, pair_order order, int threads = 256,
                              cudaStream_t stream = nullptr);

// The pairs one call computes, n (n - 1) / 2, and the float atomics it issues, 6 per pair.
constexpr std::size_t pairs(std::size_t n) { return n < 2 ? 0 : n * (n - 1) / 2; }
constexpr std::size_t atomics(std::size_t n) { return 6 * pairs(n); }

}  // namespace lab
}  // namespace nbody
