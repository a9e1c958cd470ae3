// SPDX-License-Identifier: BSD-3-Clause
// Stage 01: SAXPY with a grid-stride loop. The CUDA Handbook, chapter 11's introduction,
// listing 11.2.
//
// The first stage: one element per thread per trip of a loop that strides by the whole grid, so
// any grid and block size covers any n. The book calls such a kernel block-agnostic and
// recommends it (11.1): the best launch configuration can then be found by measuring, which is
// what the benchmark's block size sweep does. Each element costs 12 bytes of traffic (read x and
// y, write out) and one FFMA, so memory bandwidth bounds the kernel.
// The kernel is in the lesson header lesson_grid_stride.cuh, because the host stages 04-07 launch it too;
// this file registers its launcher as stage 01.
// What to look for: in the SASS (make sass STAGE=11-streaming/01_grid_stride), one 32-bit LDG.E
// of x, one of y, one FFMA and one STG.E per trip; in the device progression, how close this plain
// loop already comes to the device-to-device copy (the %d2d_copy column); in the profile (make
// profile STAGE=11-streaming/01_grid_stride), warps stalled on long_scoreboard, waiting on memory:
// one load per array in flight per thread is too few bytes to cover the memory's latency.
#include "lesson_grid_stride.cuh"

STREAMING_DEVICE_STAGE(streaming::launch_saxpy, false, "grid-stride loop (ch. 11 introduction, listing 11.2)");
