// SPDX-License-Identifier: BSD-3-Clause
// Helpers shared by every chapter's tests: poisoned outputs, guard zones past the end of a
// buffer, and element checks whose failure names the stage, the size, the first wrong index and
// the expected and actual values.
#pragma once

#include "common/check.h"
#include "common/memory.h"
#include "common/parallel.h"
#include "common/stage.h"

#include <cuda_runtime.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace course {
namespace test {

// 0xFF bytes: a float NaN (any comparison fails) and an int -1. Checks recognise it and say
// "never written" rather than quoting a NaN.
constexpr unsigned char poison_byte = 0xFF;
// Elements past the end of each output, also poisoned; a stage that writes there fails.
constexpr std::size_t guard_elements = 256;

// Whether v still holds nothing but poison bytes (never written), for any element type.
template <class T>
bool is_poison(const T &v) {
  const auto *bytes = reinterpret_cast<const unsigned char *>(&v);
  for (std::size_t b = 0; b < sizeof(T); ++b)
    if (bytes[b] != poison_byte) return false;
  return true;
}

// Under a compute-sanitizer tool (harness/sanitize.sh sets COURSE_SANITIZER to its name) kernels
// run 10-100x slower, racecheck most of all. Tests pass their big sizes through sanitizer_size():
// above 2^17 elements a size shrinks to 2^17 plus its remainder mod 4096, which keeps what made it
// awkward (a partial last tile and warp, several blocks and tiles per block) at a fraction of the
// work. The plain runs keep every size; races and out-of-bounds accesses show at these sizes too.
inline bool under_sanitizer() {
  static const bool set = std::getenv("COURSE_SANITIZER") != nullptr;
  return set;
}
inline std::size_t sanitizer_size(std::size_t n) {
  constexpr std::size_t cap = std::size_t(1) << 17;
  return (!under_sanitizer() || n <= cap) ? n : cap + n % 4096;
}

// Whole-buffer copies for checks (synchronous).
template <class T>
std::vector<T> copy_to_host(const T *d, std::size_t count) {
  std::vector<T> h(count);
  if (count) CUDA_CHECK(cudaMemcpy(h.data(), d, count * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}
template <class T>
void copy_to_device(T *d, const std::vector<T> &h) {
  if (!h.empty()) CUDA_CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
}

// The first element of got[from, end) that is no longer all poison bytes, or got.size() if none:
// for guard zones and for outputs a stage must leave alone.
template <class T>
std::size_t first_written(const std::vector<T> &got, std::size_t from) {
  for (std::size_t i = from; i < got.size(); ++i)
    if (!is_poison(got[i])) return i;
  return got.size();
}

// The one stage of kind Stage that a test program is linked with.
template <class Stage>
const Stage &stage_under_test() {
  auto &stages = registered<Stage>();
  if (stages.size() != 1) throw std::logic_error("a test program links exactly one stage of its kind");
  return stages.front();
}

template <class T>
void poison_device(T *d, std::size_t count, cudaStream_t s = nullptr) {
  if (count) CUDA_CHECK(cudaMemsetAsync(d, poison_byte, count * sizeof(T), s));
}
template <class T>
void poison_host(T *h, std::size_t count) {
  if (count) std::memset(h, poison_byte, count * sizeof(T));
}

// Result of comparing n elements.
struct element_report {
  std::size_t wrong = 0;
  std::size_t first = 0;
  double expected = 0, actual = 0;
  bool actual_is_poison = false;
  bool ok() const { return wrong == 0; }
};

// Checks got(i) against want(i) with ok(i, got, want) on all cores; keeps the lowest wrong index.
template <class Got, class Want, class Ok>
element_report check_elements(std::size_t n, Got got, Want want, Ok ok) {
  std::atomic<std::size_t> wrong{0};
  std::mutex m;
  element_report r;
  r.first = std::numeric_limits<std::size_t>::max();
  parallel_for(n, [&](std::size_t b, std::size_t e, unsigned) {
    std::size_t local = 0;
    for (std::size_t i = b; i < e; ++i) {
      auto g = got(i);
      double w = static_cast<double>(want(i));
      if (ok(i, g, w)) continue;
      if (local++ == 0) {
        std::lock_guard<std::mutex> lock(m);
        if (i < r.first) {
          r.first = i;
          r.expected = w;
          r.actual = static_cast<double>(g);
          if constexpr (std::is_same_v<decltype(g), float>) r.actual_is_poison = is_poison(g);
        }
      }
    }
    wrong += local;
  });
  r.wrong = wrong;
  return r;
}

// "stage 02_unrolled_templated, n=1000003: 3 of 1000003 elements wrong; first [1000000]: expected 0.25, got never written (poison)"
inline std::string describe(const std::string &stage, const std::string &what, std::size_t n, const element_report &r) {
  std::ostringstream os;
  os.precision(9);
  os << "stage " << stage << ", " << what << ": " << r.wrong << " of " << n << " elements wrong; first [" << r.first
     << "]: expected " << r.expected << ", got ";
  if (r.actual_is_poison) os << "never written (poison)";
  else os << r.actual;
  return os.str();
}

// Relative error of a float against a float64 reference, scaled by the magnitude of the terms
// that produced it: |got - want| <= bound * scale.
inline bool close(double got, double want, double scale, double bound) {
  return std::isfinite(got) && std::fabs(got - want) <= bound * scale;
}

}  // namespace test
}  // namespace course
