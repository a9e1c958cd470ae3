// SPDX-License-Identifier: BSD-3-Clause
// Error checking for every CUDA runtime call and kernel launch: a failure names the file, the line
// and the call, then throws, so tests report it and programs exit non-zero with one clear line.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace course {

struct cuda_error : std::runtime_error {
  cudaError_t code;
  cuda_error(cudaError_t c, const std::string &what) : std::runtime_error(what), code(c) {}
};

[[noreturn]] inline void throw_cuda_error(cudaError_t code, const char *call, const char *file,
                                          int line) {
  throw cuda_error(code, std::string(file) + ":" + std::to_string(line) + ": " + call +
                             " failed: " + cudaGetErrorName(code) + " (" +
                             cudaGetErrorString(code) + ")");
}

}  // namespace course

// CUDA_CHECK(cudaMalloc(&p, bytes));
#define CUDA_CHECK(call)                                                   \
  do {                                                                     \
    cudaError_t course_status_ = (call);                                   \
    if (course_status_ != cudaSuccess)                                     \
      course::throw_cuda_error(course_status_, #call, __FILE__, __LINE__); \
  } while (0)

// After a <<<...>>> launch: catches bad launch configurations at once (and clears them, so the
// next launch does not report them again). Faults inside the kernel
// surface at the next synchronising call, which is checked too.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
