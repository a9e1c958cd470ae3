// SPDX-License-Identifier: BSD-3-Clause
// The host side of the mask-checked build of a stage (harness/warp_mask_check.cuh): what its
// checked warp intrinsics recorded, for the test program that runs the stage. Plain C++: the test
// files include it (g++); the device side is force-included into the stage's own compile.
//
// Why a separate build: the _sync warp intrinsics have rules that no result can show. A lane that
// calls one must be named in its mask, and a shuffle that reads a lane not taking part (outside
// the mask, or exited) reads an undefined value. On today's GPUs such code often computes the
// right answer anyway (the lanes still run converged, and the hardware reads the register that is
// there), and compute-sanitizer's synccheck does not report it. The checked build makes each call
// test the rules first, records the first violation of each kind with its source line, then does
// the real call, so the answers stay those of the stage as written.
#pragma once

#include <cstddef>
#include <sstream>
#include <string>

namespace course {
namespace warpcheck {

enum kind : int {
  caller_outside_mask,     // a lane called an intrinsic whose mask does not name it
  source_not_taking_part,  // a shuffle read a lane outside its mask, or one that has exited
  bad_width,               // a shuffle width that is not a power of two in 1..32
  lanes_disagree,          // lanes of one mask called with different masks, or different intrinsics
  kinds
};

// The first call that broke one rule, and how many did. Plain data, the same on host and device.
struct violation {
  unsigned count;
  int line;
  unsigned mask;
  int lane;             // the lane that broke the rule
  int other_lane;       // source_not_taking_part: the lane it read; lanes_disagree: the lane it
                        // disagreed with
  unsigned other_mask;  // lanes_disagree: that lane's mask; source_not_taking_part: the lanes
                        // taking part
  int width;
  unsigned block[3];
  unsigned thread[3];
  char intrinsic[32];
  char other_intrinsic[32];  // lanes_disagree: what the other lane called
  char file[224];            // the end of the path, where it is longer
};

struct record {
  violation v[kinds];
  bool clean() const {
    for (const violation &x : v)
      if (x.count) return false;
    return true;
  }
};

// Defined in the mask-checked stage's translation unit (warp_mask_check.cuh), once per program.
// take(): waits for the device, returns what the checked calls recorded since the last take() and
// clears it.
record take();
// Best effort: fills the shared memory of every SM with `value`, so that a kernel reading shared
// memory it never wrote (a slot of a lane outside the intended range) reads `value`, which the
// tests choose to change the answer. Nothing in CUDA promises that shared memory keeps its
// contents from one kernel to the next; shared_memory_keeps_poison() says whether it does here.
void poison_shared_memory(int value);
bool shared_memory_keeps_poison(int value);

inline const char *rule(kind k) {
  switch (k) {
    case caller_outside_mask:
      return "was called by a lane its mask does not name: undefined (every calling lane must be in the mask)";
    case source_not_taking_part:
      return "read the value of a lane that does not take part (outside the mask, or exited): undefined";
    case bad_width: return "was given a width that is not a power of two in 1..32: undefined";
    case lanes_disagree:
      return "was called by lanes of one mask with different masks or different intrinsics: undefined";
    default: return "?";
  }
}

// One paragraph per kind that was recorded; "" when the record is clean.
inline std::string describe(const record &r) {
  std::ostringstream os;
  for (int k = 0; k < kinds; ++k) {
    const violation &v = r.v[k];
    if (!v.count) continue;
    os << "\n  " << v.intrinsic << " at " << v.file << ":" << v.line << " " << rule(kind(k))
       << ".\n    First: lane " << v.lane << " (thread " << v.thread[0];
    if (v.thread[1] || v.thread[2]) os << "," << v.thread[1] << "," << v.thread[2];
    os << " of block " << v.block[0];
    if (v.block[1] || v.block[2]) os << "," << v.block[1] << "," << v.block[2];
    os << std::hex << "), mask 0x" << v.mask << std::dec;
    if (k == source_not_taking_part)
      os << ", read lane " << v.other_lane << " (lanes taking part: 0x" << std::hex << v.other_mask
         << std::dec << ")";
    if (k == bad_width) os << ", width " << v.width;
    if (k == lanes_disagree)
      os << "; lane " << v.other_lane << " called " << v.other_intrinsic << " with mask 0x"
         << std::hex << v.other_mask << std::dec;
    os << "; " << v.count << " such call(s) by a lane.";
  }
  return os.str();
}

}  // namespace warpcheck
}  // namespace course
