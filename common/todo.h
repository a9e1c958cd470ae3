// SPDX-License-Identifier: BSD-3-Clause
// The stub that stands in an exercise's marked region until the student fills it in.
//
// The build looks for COURSE_TODO( in each stage file and compiles that stage with
// COURSE_STAGE_TODO=1, so tests and benchmarks report the stage as "not yet implemented" (TODO,
// skipped) instead of failing on the output the empty region leaves. Delete the COURSE_TODO line
// when you write your code.
#pragma once

#ifndef COURSE_STAGE_TODO
#define COURSE_STAGE_TODO 0
#endif

#define COURSE_TODO() \
  static_assert(COURSE_STAGE_TODO, "COURSE_TODO left in a stage the build did not mark as TODO")
