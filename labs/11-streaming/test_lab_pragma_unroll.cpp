// SPDX-License-Identifier: BSD-3-Clause
// Tests of the #pragma unroll lab (lab_pragma_unroll.cu: stage 01's grid-stride loop under
// `#pragma unroll U`, timed by the benchmark beside stage 02; not a stage, no exercise). The lab
// has the device stages' entry point (streaming::device_saxpy_fn, launch_config::unroll meaning
// U), so this file registers it as a device stage and the program links the device stages' own
// tests beside it (chapters/11-streaming/test_device_stages.cpp; CMakeLists.txt): every unroll
// factor 1..16, every block size, sizes 0, 1, 31, 33, 1000003 and 2^24 + 7 (and 2^31 + 17 where
// the GPU has the memory), in place, x, y and out each misaligned on its own, inputs followed by
// NaN guards, poisoned outputs with guard zones, a tiny grid, and the seeded sweep. Unlike stage
// 03, the lab must compute every case: it refuses nothing but a block size its kernel cannot
// launch (std::invalid_argument, with the reason). A failure names it as lab_pragma_unroll.
#include "streaming.h"

namespace {

const course::registrar<streaming::device_stage> lab_pragma_unroll_registrar{
    streaming::device_stage{
        course::stage_info{"lab_pragma_unroll", "#pragma unroll on stage 01's loop (11.1; a lab)",
                           "labs/11-streaming/lab_pragma_unroll.cu", false, ""},
        streaming::launch_saxpy_pragma_unroll, true}};

}  // namespace
