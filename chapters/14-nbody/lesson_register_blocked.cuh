// SPDX-License-Identifier: BSD-3-Clause
// Lesson header of stage 07_register_blocked (beyond the book: the shared-memory tiles of 14.3,
// R rows per thread). Stage 07 teaches it; stage 08_mass_scaled runs it with another interaction
// form and stage 10_multi_gpu on every GPU, so once you have written it here, those stages run
// your code (complete in solutions/14-nbody, the regions stubbed in chapters/14-nbody).
//
// An interaction form says how a tile of sources is staged in shared memory and what one
// interaction computes from it; the kernel is written once for any form:
// clang-format off
//   template <int B> struct tile;   the shared-memory tile of B sources
//   using source;                   one source, as read from the tile
//   put(tile, k, body, softening2)  thread k stores a body in slot k (the kernel passes a body of
//                                   zero mass for the slots past the end of the bodies)
//   get4(tile, j, source[4])        the sources in slots j..j+3 (j a multiple of 4)
//   interact(fx, fy, fz, x, y, z, source, softening2, self)
//                                   one interaction; self is true where the source's slot holds
//                                   this row's own body (a slot index, not a body index)
//   tile_pass<R, B, U>(tile, fx, fy, fz, px, py, pz, block_at, softening2)
//                                   the R rows of this thread against the whole tile; block_at =
//                                   (the block's first row) - (the tile's first body), so row r
//                                   of thread k sits in slot block_at + k + r B when it is in the
//                                   tile
// clang-format on
#pragma once

#include "nbody_common.cuh"

#include "common/check.h"

#include <cstddef>

namespace nbody {

// The interactions of this thread's R rows with the B sources of one tile. Masked: source
// j == self[r] is row r itself (only a form whose self term is not exactly 0 asks for it).
template <bool Masked, class Form, int R, int B, int U>
__device__ __forceinline__ void tile_interactions(const typename Form::template tile<B> &tile,
                                                  float (&fx)[R], float (&fy)[R], float (&fz)[R],
                                                  const float (&px)[R], const float (&py)[R],
                                                  const float (&pz)[R], const int (&self)[R],
                                                  float softening2) {
  // EXERCISE BEGIN: the R rows' interactions with the tile's B sources, each source read from
  // shared memory once for all R rows, U sources per loop trip.
  COURSE_TODO();
  // EXERCISE END
}

// Listing 14.1 as it stands: the tile holds the bodies as they are, body_body_interaction does
// the rest (12 FP32-pipe instructions). Body i's pull on itself is exactly 0 (dx = x - x = 0), so
// no tile needs the j == i mask.
struct listing_14_1_form {
  template <int B>
  struct tile {
    float4 body[B];
  };
  using source = float4;
  template <int B>
  __device__ static void put(tile<B> &t, int k, float4 b, float /*softening2*/) {
    t.body[k] = b;
  }
  template <int B>
  __device__ static void get4(const tile<B> &t, int j, source (&s)[4]) {
#pragma unroll
    for (int g = 0; g < 4; ++g) s[g] = t.body[j + g];
  }
  __device__ static void interact(float &fx, float &fy, float &fz, float x, float y, float z,
                                  const source &b, float softening2, bool /*self: never needed*/) {
    body_body_interaction(fx, fy, fz, x, y, z, b.x, b.y, b.z, b.w, softening2);
  }
  template <int R, int B, int U>
  __device__ static void tile_pass(const tile<B> &t, float (&fx)[R], float (&fy)[R], float (&fz)[R],
                                   const float (&px)[R], const float (&py)[R], const float (&pz)[R],
                                   std::ptrdiff_t /*block_at*/, float softening2) {
    const int none[R] = {};
    tile_interactions<false, listing_14_1_form, R, B, U>(t, fx, fy, fz, px, py, pz, none,
                                                         softening2);
  }
};

// The register-blocked kernel. A block of B threads owns R * B rows starting at
// row0 + blockIdx.x * R * B (thread k: rows k, k + B, ..., k + (R - 1) B, each thread keeping R
// bodies and R sums in registers) and the columns [blockIdx.y * cols, ... + cols) of the
// interaction matrix, cut at n. It walks those columns in tiles of B bodies staged in shared
// memory by Form; every source read from shared memory (a broadcast LDS.128) feeds R
// interactions, so the FP32 pipe, not the load/store unit, sets the pace. With gridDim.y > 1
// several blocks add into the same rows (atomicAdd; the caller zeroes `force`); with
// gridDim.y == 1 the sums are stored. force is indexed from row0 (force[i - row0]).
template <class Form, int R, int B, int U>
__global__ void __launch_bounds__(B)
    register_blocked_forces(float4 *__restrict__ force, const float4 *__restrict__ body,
                            std::size_t n, std::size_t row0, std::size_t rows, std::size_t cols,
                            float softening2) {
  static_assert(B % 4 == 0 && U % 4 == 0, "the tile is read four sources at a time");
  __shared__ typename Form::template tile<B> tile;
  // EXERCISE BEGIN: the forces on this thread's R rows from this block's slice of columns, taken
  // tile by tile through shared memory, stored (or added when the columns are split).
  COURSE_TODO();
  // EXERCISE END
}

// Launches register_blocked_forces<Form, R, B, U> over rows [row0, row0 + rows) of force (indexed
// from row0) against all n bodies, the columns split into about `split` slices of whole tiles.
template <class Form, int R, int B, int U>
void launch_register_blocked(float4 *force, const float4 *body, std::size_t n, std::size_t row0,
                             std::size_t rows, int split, float softening2, cudaStream_t stream) {
  if (rows == 0 || n == 0) return;
  // EXERCISE BEGIN: launch the kernel over every row and all n columns in about `split` slices in
  // `stream`, force zeroed first when the slices add into it.
  COURSE_TODO();
  // EXERCISE END
}

}  // namespace nbody
