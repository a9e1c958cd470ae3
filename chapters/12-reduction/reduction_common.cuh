// SPDX-License-Identifier: BSD-3-Clause
// What several reduction stages share: refusing block sizes a kernel cannot use, sizing the grid
// and the two-pass driver (12.2). The templated block reduction and the host switch over block
// sizes (12.2, listings 12.3 and 12.4) are a lesson of their own: lesson_block_reduce.cuh, which
// stage 03 teaches.
#pragma once

#include "reduction.h"

#include "common/check.h"
#include "common/launch.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace reduction {

inline const char *to_string(block_sizes s) {
  switch (s) {
    case block_sizes::powers_of_two: return "a power of two";
    case block_sizes::multiples_of_32: return "a multiple of 32";
    case block_sizes::any: return "any size";
  }
  return "?";
}

// Throws std::invalid_argument, with the reason, for a block size the stage does not handle.
inline void require_block_size(int threads, block_sizes sizes, int min_threads) {
  stage probe{{}, nullptr, sizes, min_threads};
  if (!supports(probe, threads))
    throw std::invalid_argument("this stage needs " + std::string(to_string(sizes)) +
                                " threads per block in " + std::to_string(min_threads) +
                                "..1024, not " + std::to_string(threads));
}

// The host switch of 12.2 (listing 12.4): calls f(std::integral_constant<unsigned, B>{}) for the
// power of two B == threads. You write it in stage 03's lesson header (lesson_block_reduce.cuh);
// it is declared here so the helper below can stand in for it in every stage's entry point.
template <unsigned B, class F>
void dispatch_block_size(int threads, F &&f);

// dispatch_block_size, with f compiled only for the block sizes the stage's kernel is written for
// (B >= MinThreads, the stage's min_threads): a kernel that needs a full warp is never built for
// 16 threads. The caller has refused other sizes first (require_block_size).
template <int MinThreads, class F>
void dispatch_block_size_from(int threads, F &&f) {
  dispatch_block_size<1>(threads, [&](auto b) {
    if constexpr (decltype(b)::value >= unsigned(MinThreads)) f(b);
  });
}

// As many blocks as the GPU holds at once (every SM full), but no more than the input needs when
// each thread takes `per_thread` elements; at least one, so n = 0 still writes its answer (0).
template <class Kernel>
int grid_size(Kernel kernel, const config &cfg, std::size_t n, std::size_t per_thread = 1,
              std::size_t shared = 0) {
  if (cfg.blocks > 0) return cfg.blocks;
  const std::size_t per_block = per_thread * std::size_t(cfg.threads);
  const std::size_t needed = (n + per_block - 1) / per_block;
  // One block's worth of work needs no occupancy query (three runtime calls on the host, inside
  // the timed interval of a call that takes about 4 us at small n).
  if (needed <= 1) return 1;
  const std::size_t resident = std::size_t(course::resident_blocks(kernel, cfg.threads, shared));
  return int(std::max<std::size_t>(1, std::min(needed, resident)));
}

// The two passes of 12.2: `blocks` blocks each reduce a grid-stride share of in[] to one partial
// result in the workspace (kernel `first`), then one block reduces those partials to *answer
// (kernel `second`). `shared` is the kernels' dynamic shared memory in bytes.
template <class T, class In>
void two_pass(void (*first)(T *, const In *, std::size_t),
              void (*second)(T *, const T *, std::size_t), T *d_answer, const In *d_in,
              std::size_t n, const config &cfg, workspace &ws, cudaStream_t stream,
              std::size_t shared = 0) {
  const int blocks = grid_size(first, cfg, n, 1, shared);
  T *partials = ws.partials<T>(std::size_t(blocks));
  first<<<blocks, cfg.threads, shared, stream>>>(partials, d_in, n);
  CUDA_CHECK_LAUNCH();
  second<<<1, cfg.threads, shared, stream>>>(d_answer, partials, std::size_t(blocks));
  CUDA_CHECK_LAUNCH();
}

// The same kernel (out, in, n) for both passes, as in the book.
template <class T>
void two_pass(void (*kernel)(T *, const T *, std::size_t), T *d_answer, const T *d_in,
              std::size_t n, const config &cfg, workspace &ws, cudaStream_t stream,
              std::size_t shared = 0) {
  two_pass(kernel, kernel, d_answer, d_in, n, cfg, ws, stream, shared);
}

}  // namespace reduction
