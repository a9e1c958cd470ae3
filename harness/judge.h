// SPDX-License-Identifier: BSD-3-Clause
// The speed verdict's timing program: one stage (the student's or the reference solution's) with
// its workload set up once, timed on request. `make check STAGE=exercise/<chapter>/<stage>` runs
// two of these side by side (harness/lesson.py), the exercise's and the solution's, and alternates
// between them (A-B-B-A), so drift and a neighbour's load fall on both alike; the ratio of their
// times is the verdict. Two processes, not one: a lesson header's exercise and solution versions
// define the same names, which one program cannot link twice.
//
// Each chapter provides make_workload (chapters/<chapter>/judge_<chapter>.cpp), linked with one
// stage object: registered<...>() holds that one stage. The protocol on stdin/stdout:
//   start    -> "ready <description>"  or  "todo <file>"  or  "skip <reason>"  or  "error
//   <message>" "t K\n"  -> "ms <per-call milliseconds over K back-to-back calls>"  (or "error
//   <message>") "q\n"    -> exit 0
// Parameters come as key=value arguments (lessons.toml's speed table over the chapter's
// [workload]); params::get reads them. The workload's defaults are compiled in from the same
// table (COURSE_WORKLOAD_N, ...: cmake/CourseStages.cmake), never written here.
#pragma once

#include "common/stage.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

namespace course {
namespace judge {

class params {
 public:
  explicit params(std::map<std::string, std::string> values) : values_(std::move(values)) {}
  std::string text(const std::string &key, const std::string &fallback) const;
  std::int64_t integer(const std::string &key, std::int64_t fallback) const;
  // A parameter without a default here (lessons.toml gives it): std::invalid_argument when missing.
  std::int64_t integer(const std::string &key) const;
  bool has(const std::string &key) const { return values_.count(key) != 0; }

 private:
  std::map<std::string, std::string> values_;
};

// What make_workload returns: the timed call with everything it needs already on the device.
struct workload {
  std::string description;                 // "n = 67108864 floats, 256 threads x 4"
  std::function<void(cudaStream_t)> call;  // one call of the stage, enqueued on the stream
  bool host_timed = false;     // a stage that synchronises itself: timed by the host clock
  std::shared_ptr<void> keep;  // the buffers the call uses, alive as long as the workload
};

// A stage still holding its exercise stub: not timed (the checker says TODO).
struct todo : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The one stage of Stage's kind linked into this program, or nullptr (a program links one stage
// object, which registers one stage of one kind). Throws todo while the stage holds its stub.
template <class Stage>
const Stage *linked_stage() {
  const auto &stages = course::registered<Stage>();
  if (stages.empty()) return nullptr;
  const Stage &s = stages.front();
  if (s.info.todo) throw todo(s.info.todo_in);
  return &s;
}

// Defined by each chapter's judge_<chapter>.cpp.
workload make_workload(const params &p);

}  // namespace judge
}  // namespace course
