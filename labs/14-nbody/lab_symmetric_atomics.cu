// SPDX-License-Identifier: BSD-3-Clause
// Lab: the naive symmetric form, two float atomic adds per interaction. The CUDA Handbook 14.1.1,
// figure 14.2. Newton's third law makes the force "matrix" antisymmetric (f_ji = -f_ij), so only
// the pairs above the diagonal need computing, about half the work; but then several threads add
// into the same body's sum. The book: "a completely naive implementation that performs two
// floating-point atomic adds per body-body computation is much slower than brute force, almost
// unacceptable", which is why it tiles (figures 14.3 and 14.4, stage 06 here). The book gives no
// figure for it; the benchmark measures it on today's GPU, beside stage 06 at the same N.
//
// Each pair computes the distance and r^-3 once (3 FADD, 3 FFMA, one MUFU.RSQ, 2 FMUL), then the
// two masses' factors (2 FMUL) and the two forces (6 FMUL): 16 FP32-pipe instructions where two
// one-sided interactions take 24; and six RED.E.ADD.F32 (three for body i, three negated for body
// j), each of which goes to the L2: per brute-force-equivalent interaction that is 3 atomics,
// where stage 06 issues about 0.05 (3 per column body per 32 x 32 tile, 3 per row body per run
// of 8 tiles) and the brute-force stages none.
// Two orders of the same pairs (lab_symmetric_atomics.h):
//   same_j: the obvious loop, j > i (the book gives no code for this form), all lanes of a warp
//     on the same body j at each step: the 32 atomics of one instruction on body j all hit one
//     address, which the L2 must serialise; and thread i has n - 1 - i pairs, so the first
//     blocks work longest.
//   cyclic: thread i meets i + 1, ..., i + (n - 1) / 2 (mod n), the half-way pair once: every
//     thread about n / 2 pairs, the 32 lanes of a warp on 32 different bodies j (different
//     addresses, the atomics' throughput alone).
// Correctness: every addition into a sum is an atomic whose order the hardware picks, so the
// sums differ from run to run in their last bits (float addition is not associative); the terms
// are the brute force's (f_ji = -f_ij exactly: a negation rounds nothing). The tests hold the
// result to the bound every stage meets, nbody::error_bound(n), against the float64 reference;
// test_host.cpp sums the terms in random orders on the host to show that the order alone stays
// well inside it.
// What to look for: in the benchmark's "lab" table, time and interactions/s beside stage 06 and
// the best stage, and the atomics per second (6 per pair / time), the rate that bounds this form;
// in the SASS (cuobjdump -sass on the bench), six RED.E.ADD.F32 per pair in the loop.
#include "lab_symmetric_atomics.h"

#include "nbody_common.cuh"

#include "common/check.h"

#include <stdexcept>
#include <string>

namespace nbody {
namespace lab {

namespace {

// The pair {i, j}: adds bj's pull to force[i] and bi's opposite pull to force[j], sharing the
// distance and r^-3.
__device__ __forceinline__ void add_pair(float4 *force, std::size_t i, float4 bi, std::size_t j,
                                         float4 bj, float softening2) {
  const float dx = bj.x - bi.x, dy = bj.y - bi.y, dz = bj.z - bi.z;
  const float inv = reciprocal_sqrt(dx * dx + (dy * dy + (dz * dz + softening2)));
  const float inv3 = inv * inv * inv;
  const float si = bj.w * inv3, sj = bi.w * inv3;
  atomicAdd(&force[i].x, dx * si);
  atomicAdd(&force[i].y, dy * si);
  atomicAdd(&force[i].z, dz * si);
  atomicAdd(&force[j].x, -dx * sj);
  atomicAdd(&force[j].y, -dy * sj);
  atomicAdd(&force[j].z, -dz * sj);
}

__global__ void same_j_kernel(float4 *force, const float4 *body, std::size_t n, float softening2) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  const std::size_t first =
      i - threadIdx.x % 32;  // the warp's first row: its lanes step through j together
  if (first >= n) return;
  const float4 me = i < n ? body[i] : make_float4(0.f, 0.f, 0.f, 0.f);
  for (std::size_t j = first + 1; j < n; ++j) {
    if (j <= i)
      continue;  // pairs above the diagonal only (and nothing for a lane past n: j < n <= i)
    add_pair(force, i, me, j, body[j], softening2);
  }
}

__global__ void cyclic_kernel(float4 *force, const float4 *body, std::size_t n, float softening2) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const float4 me = body[i];
  // {i, j} at cyclic distance d = (j - i) mod n is taken by i when d <= (n - 1) / 2 and by j when
  // n - d is; for an even n the distance n / 2 is both, so only the lower body (i < n / 2) takes
  // it.
  const std::size_t half = (n - 1) / 2;
  std::size_t j = i;
  for (std::size_t k = 1; k <= half; ++k) {
    if (++j == n) j = 0;
    add_pair(force, i, me, j, body[j], softening2);
  }
  if (n % 2 == 0 && i < n / 2) add_pair(force, i, me, i + n / 2, body[i + n / 2], softening2);
}

}  // namespace

const char *name(pair_order order) {
  switch (order) {
    case pair_order::same_j: return "naive symmetric, same j per warp";
    case pair_order::cyclic: return "naive symmetric, cyclic j";
  }
  return "?";
}

void forces_symmetric_atomics(float4 *d_force, const float4 *d_body, std::size_t n,
                              float softening2, pair_order order, int threads,
                              cudaStream_t stream) {
  if (!supports_threads(threads))
    throw std::invalid_argument(
        "the symmetric-atomics lab needs 32..1024 threads per block, a multiple of 32, not " +
        std::to_string(threads));
  if (n == 0) return;
  CUDA_CHECK(cudaMemsetAsync(d_force, 0, n * sizeof(float4), stream));
  const unsigned blocks = unsigned(ceil_div(n, std::size_t(threads)));
  switch (order) {
    case pair_order::same_j:
      same_j_kernel<<<blocks, threads, 0, stream>>>(d_force, d_body, n, softening2);
      break;
    case pair_order::cyclic:
      cyclic_kernel<<<blocks, threads, 0, stream>>>(d_force, d_body, n, softening2);
      break;
    default: throw std::invalid_argument("unknown pair order");
  }
  CUDA_CHECK_LAUNCH();
}

}  // namespace lab
}  // namespace nbody
