// SPDX-License-Identifier: BSD-3-Clause
// A lab, not a stage: what a predicated-off load costs. The book (8.4.1, in the predication
// article): a predicate suppresses a load or store early enough that it generates none of the
// memory traffic it would have. Each warp here sums the ints of its first `lanes_on` lanes; the
// load of every other lane is off. The compiler may predicate it (@P0 LDG) or branch around it;
// either way a lane whose condition is false issues no memory request.
// What to look for (the tests check the sums, and that lanes_on = 0 runs on a null pointer
// without a fault; Nsight Compute shows the traffic, with the command in notes.md): with every
// lane off, no request and no bytes. The lanes that are on cost whole pieces of memory, not the 4
// bytes each asked for. Between L1 and L2 the piece is a 32-byte sector: 32 lanes move the four
// sectors of the warp's 128-byte line, 16 lanes two, 1 to 8 lanes one, a quarter. Between L2 and
// DRAM it is what the L2 fills per miss, 64 bytes on the H100 (ncu, 2026-11-25): 1 to 16 lanes
// read half of what 32 lanes read from DRAM (dram__bytes_read.sum), not a quarter.
#include "lab_predicated_load.h"

#include "common/check.h"

#include <stdexcept>

namespace warp {
namespace {

constexpr int block = 256;

__global__ void predicated_sums(int *warp_sums, const int *in, std::size_t n, int lanes_on) {
  const std::size_t i = blockIdx.x * std::size_t(block) + threadIdx.x;
  const int lane = threadIdx.x % 32;
  int v = 0;
  if (lane < lanes_on && i < n) {
    v = in[i];  // the condition predicates the load: off, it reads nothing
  }
  // Every lane of the launched warps is here (whole warps, no early return): full mask.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  // SM 7.5 has no warp reduce instruction (__reduce_add_sync is SM 8.0 and newer): five butterfly
  // shuffles give every lane the same sum, mod 2^32 like the reduce.
  unsigned u = static_cast<unsigned>(v);
  for (int k = 16; k > 0; k /= 2) u += __shfl_xor_sync(0xffffffffu, u, k);
  const int sum = static_cast<int>(u);
#else
  const int sum = __reduce_add_sync(0xffffffffu, v);  // one REDUX (SM 8.0 and newer)
#endif
  if (lane == 0 && i < n) warp_sums[i / 32] = sum;
}

}  // namespace

void lab_predicated_sums(int *d_warp_sums, const int *d_in, std::size_t n, int lanes_on,
                         cudaStream_t stream) {
  if (lanes_on < 0 || lanes_on > 32)
    throw std::invalid_argument("lab_predicated_sums: lanes_on must be in [0, 32]");
  if (n == 0) return;
  const std::size_t blocks = (n + block - 1) / block;
  predicated_sums<<<static_cast<unsigned>(blocks), block, 0, stream>>>(d_warp_sums, d_in, n,
                                                                       lanes_on);
  CUDA_CHECK_LAUNCH();
}

}  // namespace warp
