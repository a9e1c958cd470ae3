// SPDX-License-Identifier: BSD-3-Clause
// No code. The host stages (04-07) launch stage 01's grid-stride kernel, which lives in the lesson
// header lesson_grid_stride.cuh: they run the student's kernel, and no chapter file shows stage
// 01's answer. The build still compiles this file into the library streaming_kernel that
// CMakeLists.txt names for the host stages; the library and this file can be removed together.
