// SPDX-License-Identifier: BSD-3-Clause
// The main of every judge program (harness/judge.h says what it does and its protocol).
#include "harness/judge.h"

#include "common/check.h"
#include "common/device.h"
#include "common/memory.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

namespace course {
namespace judge {

std::string params::text(const std::string &key, const std::string &fallback) const {
  const auto it = values_.find(key);
  return it == values_.end() ? fallback : it->second;
}

std::int64_t params::integer(const std::string &key, std::int64_t fallback) const {
  const auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  std::size_t used = 0;
  std::int64_t v = 0;
  try {
    v = std::stoll(it->second, &used, 0);
  } catch (const std::exception &) {
    used = 0;
  }
  if (used != it->second.size())
    throw std::invalid_argument(key + "=" + it->second + " is not an integer");
  return v;
}

std::int64_t params::integer(const std::string &key) const {
  if (!has(key))
    throw std::invalid_argument(
        key + ": missing (lessons.toml sets it for this stage; lesson.py passes it)");
  return integer(key, 0);
}

namespace {

// Milliseconds per call over k back-to-back calls.
double time_calls(const workload &w, cudaStream_t s, event &start, event &stop, long k) {
  if (w.host_timed) {
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < k; i++) w.call(s);
    CUDA_CHECK(cudaStreamSynchronize(s));
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
               .count() /
           k;
  }
  CUDA_CHECK(cudaEventRecord(start, s));
  for (long i = 0; i < k; i++) w.call(s);
  CUDA_CHECK(cudaEventRecord(stop, s));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  return double(ms) / k;
}

std::string one_line(std::string s) {
  for (char &c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

}  // namespace
}  // namespace judge
}  // namespace course

int main(int argc, char **argv) {
  using namespace course::judge;
  std::map<std::string, std::string> values;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    const auto eq = a.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::printf("error argument '%s' is not key=value\n", a.c_str());
      return 2;
    }
    values[a.substr(0, eq)] = a.substr(eq + 1);
  }
  const course::gpu_status gpu = course::probe_gpu();
  if (!gpu.usable) {
    std::printf("skip %s\n", one_line(gpu.reason).c_str());
    return 0;
  }
  try {
    const workload w = make_workload(params(values));
    course::stream s;
    course::event start, stop;
    w.call(s);  // the first call loads the module: never timed
    CUDA_CHECK(cudaStreamSynchronize(s));
    std::printf("ready %s\n", one_line(w.description).c_str());
    std::fflush(stdout);
    std::string line;
    while (std::getline(std::cin, line)) {
      std::istringstream in(line);
      std::string verb;
      long k = 1;
      in >> verb >> k;
      if (verb == "q") break;
      if (verb != "t" || k < 1) {
        std::printf("error unknown request '%s'\n", line.c_str());
      } else {
        std::printf("ms %.6f\n", time_calls(w, s, start, stop, k));
      }
      std::fflush(stdout);
    }
  } catch (const todo &t) {
    std::printf("todo %s\n", one_line(t.what()).c_str());
  } catch (const std::exception &e) {
    std::printf("error %s\n", one_line(e.what()).c_str());
    return 1;
  }
  return 0;
}
