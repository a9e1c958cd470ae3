// SPDX-License-Identifier: BSD-3-Clause
// Stage 01: SAXPY with a grid-stride loop. The CUDA Handbook, chapter 11's introduction,
// listing 11.2.
//
// Your task: out = alpha * x + y on n floats in device memory, with one loop per thread that any
// grid and any block size can run (the book calls such a kernel block-agnostic, 11.1). Each
// element costs 12 bytes of memory traffic and one multiply-add: the kernel is bound by memory.
// You write it in the lesson header lesson_grid_stride.cuh, not here: the host stages 04-07 launch
// the same kernel, so they will run yours. This file only registers its launcher as stage 01. Watch
// for: n past 2^31 (one test goes there), and which floats the 32 threads of a warp touch together.
// Then compare your SASS with the reference's: make sass-diff A=11-streaming/01_grid_stride
// B=exercise/11-streaming/01_grid_stride
#include "lesson_grid_stride.cuh"

STREAMING_DEVICE_STAGE(streaming::launch_saxpy, false,
                       "grid-stride loop (ch. 11 introduction, listing 11.2)");
