// SPDX-License-Identifier: BSD-3-Clause
// Stage 09, the CPU rival (The CUDA Handbook 14.7, listings 14.8 and 14.9): the entry point of
// the SIMD, multithreaded force computation, so that tests, the benchmark and the driver can call
// it like the GPU stages.
#pragma once

#include "nbody.h"

#include "common/parallel.h"
#include "common/stage.h"

#include <cstddef>

namespace nbody {
namespace cpu {

enum class isa { scalar, sse, avx2, avx512 };
constexpr isa all_isas[] = {isa::scalar, isa::sse, isa::avx2, isa::avx512};
inline const char *to_string(isa s) {
  switch (s) {
    case isa::scalar: return "scalar";
    case isa::sse: return "SSE";
    case isa::avx2: return "AVX2+FMA";
    case isa::avx512: return "AVX-512";
  }
  return "?";
}

// force[0, n) from body[0, n) with the instruction set `s` (which must be supported), rows dealt
// to the pool's threads (pool == nullptr: the calling thread alone).
using forces_fn = void (*)(float4 *force, const float4 *body, std::size_t n, float softening2,
                           isa s, course::thread_pool *pool);

struct stage {
  course::stage_info info;
  forces_fn forces = nullptr;
  bool (*supported)(isa) = nullptr;  // what this CPU can run (chosen at run time)
  isa (*best)() = nullptr;           // the widest supported
};

}  // namespace cpu
}  // namespace nbody

// NBODY_CPU_STAGE("title (14.7)", forces, supported, best);  registers the CPU stage compiled in
// this file; its id is the build's COURSE_STAGE_ID.
#define NBODY_CPU_STAGE(title, ...)                                                        \
  static course::registrar<nbody::cpu::stage> COURSE_CONCAT(course_registrar_, __LINE__) { \
    nbody::cpu::stage { COURSE_THIS_STAGE(title), __VA_ARGS__ }                            \
  }
