// SPDX-License-Identifier: BSD-3-Clause
// A host model of one 32-lane warp: what each shuffle form defines as the result in every lane,
// for any width and mask. The reference of the shuffle tests, written from the definitions (CUDA
// C++ Programming Guide, warp shuffle functions; the PTX ISA's shfl.sync), not from the stage.
//
// The rules, for a lane in segment [first, first + width):
//   broadcast(src)   reads first + src mod width (a source outside [0, width) wraps);
//   rotate(offset)   reads first + (lane - first + offset) mod width (an idx shuffle that wraps);
//   up(delta)        reads lane - delta, or keeps its own value if that is below first;
//   down(delta)      reads lane + delta, or keeps its own value if that is past the segment;
//   butterfly(m)     reads lane ^ m, or keeps its own value if that is past the segment (an
//                    earlier segment may be read: the hardware bounds the source from above only).
// A lane that reads a lane outside the mask gets an undefined value.
#pragma once

#include "warp.h"

#include <optional>

namespace warp {
namespace model {

// The lane whose value `lane` receives (its own lane where the source falls outside the segment).
inline int source_lane(shuffle_form form, int lane, int arg, int width) {
  const int first = lane / width * width;
  const int last = first + width - 1;
  const auto wrap = [&](int k) { return first + ((k % width) + width) % width; };
  switch (form) {
    case shuffle_form::broadcast: return wrap(arg);
    case shuffle_form::rotate: return wrap(lane - first + arg);
    case shuffle_form::up: return lane - arg >= first ? lane - arg : lane;
    case shuffle_form::down: return lane + arg <= last ? lane + arg : lane;
    case shuffle_form::butterfly: return (lane ^ arg) <= last ? lane ^ arg : lane;
  }
  return lane;
}

// What `lane` holds after the stage's shuffle kernel ran case c on a warp holding in[0..32):
// lanes outside c.mask keep their own value (they take no part); nullopt where the result is
// undefined (the source lane is not in the mask).
inline std::optional<int> shuffle(const shuffle_case &c, const int *in, int lane) {
  if (!(c.mask >> lane & 1u)) return in[lane];
  const int src = source_lane(c.form, lane, c.arg, c.width);
  if (!(c.mask >> src & 1u)) return std::nullopt;
  return in[src];
}

// The lane masks of the PTX special registers %lanemask_lt, _le, _eq, _ge, _gt.
inline unsigned lanemask_lt(int lane) { return (1u << lane) - 1u; }
inline unsigned lanemask_eq(int lane) { return 1u << lane; }
inline unsigned lanemask_le(int lane) { return lanemask_lt(lane) | lanemask_eq(lane); }
inline unsigned lanemask_ge(int lane) { return ~lanemask_lt(lane); }
inline unsigned lanemask_gt(int lane) { return ~lanemask_le(lane); }

}  // namespace model
}  // namespace warp
