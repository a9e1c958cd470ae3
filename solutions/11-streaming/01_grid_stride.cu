// SPDX-License-Identifier: BSD-3-Clause
// Stage 01: SAXPY with a grid-stride loop. The CUDA Handbook, chapter 11's introduction, listing
// 11.2.
//
// One element per thread per trip of a loop that strides by the whole grid, so any grid and block
// size covers any n (block-agnostic, as 11.1 recommends: the best launch is then found by
// measuring). 12 bytes and one FFMA per element: memory bound. The kernel is in the lesson header
// lesson_grid_stride.cuh, because the host stages 04-07 launch it too.
// What to look for: in the SASS (`make sass STAGE=11-streaming/01_grid_stride`), one LDG.E of x,
// one of y, one FFMA and one STG.E per trip; in the device progression, the %d2d_copy column; in
// the profile, long_scoreboard: one load per array in flight per thread is too few bytes.
#include "lesson_grid_stride.cuh"

STREAMING_DEVICE_STAGE(streaming::launch_saxpy, false,
                       "grid-stride loop (ch. 11 introduction, listing 11.2)");
