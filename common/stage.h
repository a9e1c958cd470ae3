// SPDX-License-Identifier: BSD-3-Clause
// How a stage makes itself known. Every stage file of a chapter defines the chapter's entry point
// (in an unnamed namespace, so all stages can link into one benchmark) and registers it; tests
// and benchmarks iterate over what was registered. The build defines, per stage file:
//   COURSE_STAGE_ID    "01_grid_stride"
//   COURSE_STAGE_FILE  the source path, for messages
//   COURSE_STAGE_TODO  1 while the exercise's COURSE_TODO stub is still there, in the stage file or
//                      in a lesson header it includes
//   COURSE_STAGE_TODO_IN  the files that still hold the stub
//   ("chapters/13-scan/lesson_block_scan.cuh")
#pragma once

#include "common/todo.h"

#include <string>
#include <vector>

#ifndef COURSE_STAGE_ID
#define COURSE_STAGE_ID "unnamed"
#endif
#ifndef COURSE_STAGE_FILE
#define COURSE_STAGE_FILE __FILE__
#endif
#ifndef COURSE_STAGE_TODO_IN
#define COURSE_STAGE_TODO_IN COURSE_STAGE_FILE
#endif

namespace course {

// What every chapter's stage descriptor starts with.
struct stage_info {
  std::string id;     // "01_grid_stride"
  std::string title;  // "grid-stride loop (11.2)"
  std::string file;
  bool todo = false;
  std::string todo_in;  // where the stub still is, while todo
};

template <class Stage>
std::vector<Stage> &registered() {
  static std::vector<Stage> stages;
  return stages;
}

// Stages still holding COURSE_TODO, over every chapter linked in (the test main reports them).
inline std::vector<stage_info> &todo_stages() {
  static std::vector<stage_info> stages;
  return stages;
}

template <class Stage>
struct registrar {
  explicit registrar(Stage s) {
    if (s.info.todo) todo_stages().push_back(s.info);
    registered<Stage>().push_back(std::move(s));
  }
};

}  // namespace course

// The descriptor of the stage being compiled (a macro: the values differ per translation unit).
#define COURSE_THIS_STAGE(title)                                                         \
  (course::stage_info{COURSE_STAGE_ID, title, COURSE_STAGE_FILE, COURSE_STAGE_TODO != 0, \
                      COURSE_STAGE_TODO_IN})

// A unique name for the registrar object of one translation unit.
#define COURSE_CONCAT_(a, b) a##b
#define COURSE_CONCAT(a, b) COURSE_CONCAT_(a, b)
