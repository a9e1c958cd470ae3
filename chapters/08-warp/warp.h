// SPDX-License-Identifier: BSD-3-Clause
// Chapter 8, the warp: the host-visible entry points of the chapter's exercises. Tests are compiled
// by g++, so nothing here is CUDA syntax; every pointer passed to an entry point is device memory.
//
// Unlike chapter 11, the stages are not one kernel made faster step by step but five separate
// exercises on the primitives chapters 12 (reduction) and 13 (scan) build on, so each kind of
// stage has its own descriptor:
//   01            shuffle_stage      the shuffle forms, lane and segment ids
//   02, 03        reduce_stage       a warp's sum (by shuffles, then in shared memory), and a
//                                    whole array's sum built on it
//   04            vote_stage         ballot, any, all, popc, lane masks, warp-level compaction
//   05            predication_stage  small kernels whose SASS shows predication and divergence,
//                                    each as written and in a branch-free form
#pragma once

#include "common/stage.h"

#include <cstddef>
#include <utility>

namespace warp {

// Threads per warp on every NVIDIA GPU so far. Device code could read the built-in warpSize, but
// that is a variable, not a constant expression; sizes of arrays and masks need the constant.
constexpr int lanes = 32;
constexpr unsigned full_mask = 0xffffffffu;

// ---- stage 01: shuffle forms -------------------------------------------------------------------

enum class shuffle_form {
  broadcast,  // __shfl_sync(mask, v, arg, width): every lane reads lane arg of its segment
  up,    // __shfl_up_sync(mask, v, arg, width): lane reads lane - arg; the first arg keep their own
  down,  // __shfl_down_sync(mask, v, arg, width): lane reads lane + arg; the last arg keep their
         // own
  rotate,     // __shfl_sync(mask, v, lane + arg, width): like down (or up, for arg < 0), wrapping
              // round
  butterfly,  // __shfl_xor_sync(mask, v, arg, width): lane reads lane ^ arg
};
constexpr shuffle_form all_shuffle_forms[] = {shuffle_form::broadcast, shuffle_form::up,
                                              shuffle_form::down, shuffle_form::rotate,
                                              shuffle_form::butterfly};

inline const char *to_string(shuffle_form f) {
  switch (f) {
    case shuffle_form::broadcast: return "broadcast";
    case shuffle_form::up: return "up";
    case shuffle_form::down: return "down";
    case shuffle_form::rotate: return "rotate";
    case shuffle_form::butterfly: return "butterfly";
  }
  return "?";
}

// One shuffle done by one warp: `width` is 2, 4, 8, 16 or 32 lanes per segment; only the lanes
// whose bit is set in `mask` take part (the others keep their own value).
struct shuffle_case {
  shuffle_form form;
  int arg;  // source lane (broadcast), offset (up, down: 0..31; rotate: either sign), lane mask
            // (butterfly)
  int width;
  unsigned mask;
};

// Warp c of the launch does cases[c] on in[32c .. 32c+32) and writes out[32c .. 32c+32).
using shuffle_fn = void (*)(int *out, const int *in, const shuffle_case *cases, int n_cases);
// The same on floats and doubles: the shuffle intrinsics are overloaded for them, and move the
// bits unchanged (a double is two 32-bit shuffles, one per half).
using shuffle_float_fn = void (*)(float *out, const float *in, const shuffle_case *cases,
                                  int n_cases);
using shuffle_double_fn = void (*)(double *out, const double *in, const shuffle_case *cases,
                                   int n_cases);

// Who a thread is, as the formulas say and as the hardware says (%laneid).
struct thread_ids {
  int lane;      // position in its warp
  int warp;      // which warp of the block
  int segment;   // which segment of `width` lanes within its warp
  int seg_lane;  // position in its segment: what the shuffles with `width` call a lane
  int hw_lane;   // the PTX special register %laneid
};

// One block of block_x * block_y threads; out[threadIdx.y * block_x + threadIdx.x] is that thread's
// ids.
using thread_ids_fn = void (*)(thread_ids *out, int block_x, int block_y, int width);

struct shuffle_stage {
  course::stage_info info;
  shuffle_fn shuffle;
  thread_ids_fn ids;
  shuffle_float_fn shuffle_float;
  shuffle_double_fn shuffle_double;
};

// ---- stages 02 and 03: reductions --------------------------------------------------------------

// Every lane of warp w gets the sum of in[32w .. 32w+32): out[32w + lane] = that sum.
using warp_sum_fn = void (*)(int *out, const int *in, int n_warps);

struct reduce_config {
  int threads = 256;  // per block; a multiple of 32, at most 1024
  int blocks = 0;     // 0: as many as the GPU holds at once, no more than n needs
};

// *out = in[0] + ... + in[n-1] (0 when n is 0). Synchronous: the stage waits for its kernels.
using sum_fn = void (*)(int *out, const int *in, std::size_t n, const reduce_config &cfg);

struct reduce_stage {
  course::stage_info info;
  warp_sum_fn warp_sum;
  warp_sum_fn warp_sum_short;  // the variant that lets idle lanes add (stage 03), or nullptr
  sum_fn sum;
};

// ---- stage 04: vote ----------------------------------------------------------------------------

// What one lane of a warp learns from one vote on predicate p among the lanes of `mask`.
struct vote_result {
  unsigned ballot;  // __ballot_sync: bit k is lane k's p (0 for lanes outside the mask)
  int any;          // __any_sync, as 0 or 1
  int all;          // __all_sync, as 0 or 1
  int count;        // lanes with p true
  int rank;         // lanes below this one with p true
  int leader;       // the lowest lane with p true, -1 if none
  unsigned lanemask_lt, lanemask_le, lanemask_eq, lanemask_ge,
      lanemask_gt;  // PTX %lanemask_* of this lane
};

// Warp w votes on pred[32w + lane] != 0 among the lanes of masks[w]; each of those lanes writes
// out[32w + lane]. Lanes outside the mask take no part and write nothing.
using vote_fn = void (*)(vote_result *out, const int *pred, const unsigned *masks, int n_warps);

// Warp-level stream compaction of the positive values: warp w (covering in[32w .. 32w+32) ∩ [0, n))
// writes its positive values, in order, to out[32w], out[32w+1], ... and their number to counts[w].
// out has 32 * ceil(n / 32) elements, counts ceil(n / 32); slots past a warp's count are not
// written.
using compact_fn = void (*)(int *out, int *counts, const int *in, std::size_t n);

struct vote_stage {
  course::stage_info info;
  vote_fn vote;
  compact_fn compact;
};

// ---- stage 05: predication and divergence ------------------------------------------------------

// Element-wise kernels out[i] = f(in[i]), each a different shape of conditional code.
enum class branchy {
  short_if,      // if (v < 0) v = 3 * v + 7;
  if_else,       // if (v & 1) v = 3 * v + 1; else v = v / 2;   (one Collatz step)
  ternary,       // v > 0 ? 5 * v : -v / 3
  long_if_else,  // u = v; if (v & 1) 12 rounds of u = u * u + k; else 12 rounds of u = (u ^ (u >>
                 // 5)) * 3 + k
  data_loop,     // u = v; (v & 15) rounds of u = u * 2654435761 + k: a trip count per lane
  min_max_abs,   // min(max(v, -1000), 1000) + abs(v)
  // (u is unsigned, k counts from 0, the result is u as int)
};
constexpr branchy all_branchy[] = {branchy::short_if,     branchy::if_else,   branchy::ternary,
                                   branchy::long_if_else, branchy::data_loop, branchy::min_max_abs};

inline const char *to_string(branchy b) {
  switch (b) {
    case branchy::short_if: return "short_if";
    case branchy::if_else: return "if_else";
    case branchy::ternary: return "ternary";
    case branchy::long_if_else: return "long_if_else";
    case branchy::data_loop: return "data_loop";
    case branchy::min_max_abs: return "min_max_abs";
  }
  return "?";
}

// Every conditional kernel exists in two forms with the same results, bit for bit: as written
// (if, else and ?: around the work; the compiler decides whether to predicate or to branch) and
// branch-free (the exercise: no control flow left for the compiler to decide on, only arithmetic,
// masks, selects of values, min, max, abs).
enum class form { as_written, branch_free };
constexpr form all_forms[] = {form::as_written, form::branch_free};

inline const char *to_string(form f) {
  return f == form::as_written ? "as written" : "branch-free";
}

// The branch of length N: u = v; if (v & 1) N rounds of u = u * u + k (k = 0..N-1, unsigned u).
// Where the compiler stops predicating the branch and starts jumping over it is the lesson; these
// are the lengths the stage compiles.
using branch_lengths = std::integer_sequence<int, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 16, 24, 32>;

using branchy_fn = void (*)(branchy kernel, form f, int *out, const int *in, std::size_t n);
// Throws std::invalid_argument for a length not in branch_lengths.
using branch_length_fn = void (*)(int length, int *out, const int *in, std::size_t n);
// out[i] = clamp(|in[i]| - 1, -0.5, 0.5) as std::clamp does it: comparisons with a NaN are false,
// so a NaN stays NaN (fminf and fmaxf would return the bound instead).
using clamp_abs_fn = void (*)(form f, float *out, const float *in, std::size_t n);

struct predication_stage {
  course::stage_info info;
  branchy_fn run;
  branch_length_fn branch_length;
  clamp_abs_fn clamp_abs;
};

}  // namespace warp

// WARP_STAGE(shuffle_stage, "title", shuffle, ids);  registers the stage compiled in this file.
#define WARP_STAGE(descriptor, title, ...)                                                \
  static course::registrar<warp::descriptor> COURSE_CONCAT(course_registrar_, __LINE__) { \
    warp::descriptor { COURSE_THIS_STAGE(title), __VA_ARGS__ }                            \
  }
