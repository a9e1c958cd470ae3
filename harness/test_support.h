// SPDX-License-Identifier: BSD-3-Clause
// Helpers shared by every chapter's tests: poisoned outputs, guard zones past the end of a
// buffer, and element checks whose failure names the stage, the size, the first wrong index and
// the expected and actual values.
#pragma once

#include "common/check.h"
#include "common/memory.h"
#include "common/parallel.h"
#include "common/random.h"
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

// Where an array of n elements starting `offset` elements into `buf` (host memory) was written
// outside: "" if the offset's elements before it and the `guard` after it still hold, byte for
// byte, what before(i) says element i of buf held; else the first changed one, "element 3 past the
// end" or "element 1 before the start" (checked in that order).
template <class T, class Before>
std::string guard_zone_damage(const T *buf, std::size_t offset, std::size_t n, std::size_t guard,
                              Before before) {
  for (std::size_t k = 0; k < guard; ++k) {
    const T was = before(offset + n + k);
    if (std::memcmp(&buf[offset + n + k], &was, sizeof(T)) != 0)
      return "element " + std::to_string(k) + " past the end";
  }
  for (std::size_t k = 1; k <= offset; ++k) {
    const T was = before(offset - k);
    if (std::memcmp(&buf[offset - k], &was, sizeof(T)) != 0)
      return "element " + std::to_string(k) + " before the start";
  }
  return "";
}

// The one stage of kind Stage that a test program is linked with.
template <class Stage>
const Stage &stage_under_test() {
  auto &stages = registered<Stage>();
  if (stages.size() != 1)
    throw std::logic_error("a test program links exactly one stage of its kind");
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

// "stage 02_unrolled_templated, n=1000003: 3 of 1000003 elements wrong; first [1000000]: expected
// 0.25, got never written (poison)"
inline std::string describe(const std::string &stage, const std::string &what, std::size_t n,
                            const element_report &r) {
  std::ostringstream os;
  os.precision(9);
  os << "stage " << stage << ", " << what << ": " << r.wrong << " of " << n
     << " elements wrong; first [" << r.first << "]: expected " << r.expected << ", got ";
  if (r.actual_is_poison) os << "never written (poison)";
  else os << r.actual;
  return os.str();
}

// A T whose bits carry the int v, for tests that move values without computing on them: a 4-byte
// T holds v's bits; an 8-byte T holds v in its high half and a different pattern derived from v in
// its low half, so that a lane that read the wrong source, or a half left behind, shows. Random
// bits make NaN patterns too, which must travel unchanged: compare bit for bit.
template <class T>
T value_from(int v) {
  T t;
  if constexpr (sizeof(T) == 4) {
    std::memcpy(&t, &v, sizeof t);
  } else {
    const std::uint32_t hi = static_cast<std::uint32_t>(v), lo = ~hi * 2654435761u;
    const std::uint64_t bits = std::uint64_t(hi) << 32 | lo;
    std::memcpy(&t, &bits, sizeof t);
  }
  return t;
}

// n random ints from `seed`, each distinct within its warp: element i holds i % 32 (its lane) in
// the low five bits, so a value read from the wrong lane shows.
inline std::vector<int> lane_tagged_ints(std::size_t n, std::uint64_t seed) {
  std::vector<int> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<int>((static_cast<std::uint32_t>(random_bits(seed, i)) & ~31u) | (i % 32));
  return v;
}

// Relative error of a float against a float64 reference, scaled by the magnitude of the terms
// that produced it: |got - want| <= bound * scale.
inline bool close(double got, double want, double scale, double bound) {
  return std::isfinite(got) && std::fabs(got - want) <= bound * scale;
}

}  // namespace test
}  // namespace course
