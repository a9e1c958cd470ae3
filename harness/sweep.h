// SPDX-License-Identifier: BSD-3-Clause
// What every chapter's seeded random sweep ([sweep] tests) is made of:
//   - sweep_rng draws the cases (sizes, block sizes, offsets, modes) from one seed, so a failure
//     replays with the COURSE_SEED line the test main prints;
//   - guarded<T> is a device array placed `offset` elements into its allocation (so any alignment
//     can be asked for, each pointer on its own) with guard elements before and after it. An
//     input's guards hold a value that changes the result if a stage reads it (NaN, a large int, a
//     heavy body), so a read past the end fails the plain test and not only memcheck; an output's
//     hold poison bytes that must still be there afterwards.
#pragma once

#include "harness/test_support.h"

#include "common/check.h"
#include "common/memory.h"
#include "common/random.h"
#include "common/random_fill.h"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace course {
namespace test {

class sweep_rng {
 public:
  explicit sweep_rng(std::uint64_t seed) : seed_(seed) {}
  std::uint64_t seed() const { return seed_; }
  std::uint64_t bits() { return random_bits(seed_, next_++); }
  // Uniform in [0, k), and in [lo, hi].
  std::size_t below(std::size_t k) { return k ? std::size_t(bits() % k) : 0; }
  std::size_t between(std::size_t lo, std::size_t hi) { return lo + below(hi - lo + 1); }
  bool chance(double p) { return double(bits() >> 11) * (1.0 / 9007199254740992.0) < p; }
  template <class T>
  T pick(std::initializer_list<T> choices) {
    return *(choices.begin() + below(choices.size()));
  }
  template <class T>
  T pick(const std::vector<T> &choices) {
    return choices[below(choices.size())];
  }

  // A mask of the 32 lanes of a warp: the whole warp, about half the lanes, a run of lanes, one
  // lane, all but one, or lanes drawn sparsely or densely (now and then none at all).
  unsigned lane_mask() {
    switch (below(6)) {
      case 0: return 0xffffffffu;
      case 1: return static_cast<unsigned>(bits());
      case 2: {
        const unsigned first = unsigned(below(32)), last = unsigned(between(first, 31));
        return (last == 31 ? 0xffffffffu : (2u << last) - 1u) & ~((1u << first) - 1u);
      }
      case 3: return 1u << below(32);
      case 4: return ~(1u << below(32));
      default: {
        const double p = pick({0.05, 0.2, 0.8, 0.95});
        unsigned m = 0;
        for (unsigned lane = 0; lane < 32; ++lane)
          if (chance(p)) m |= 1u << lane;
        return m;
      }
    }
  }

  // A size in [0, max] that breaks lazy code: 0 or 1, a prime, a multiple of one of `boundaries`
  // (warp, block, tile sizes) or one off it, or a size spread evenly over the orders of magnitude.
  std::size_t awkward_size(const std::vector<std::size_t> &boundaries, std::size_t max) {
    static const std::size_t primes[] = {2,   3,    5,    7,     13,      31,      127,
                                         257, 1021, 4099, 65521, 1000003, 16777259};
    const std::size_t kind = below(20);
    std::size_t n;
    if (kind == 0) {
      n = below(2);
    } else if (kind < 4) {
      n = primes[below(sizeof primes / sizeof *primes)];
    } else if (kind < 13 && !boundaries.empty()) {
      const std::size_t b = pick(boundaries);
      const std::size_t k =
          b ? between(1, std::max<std::size_t>(1, std::min<std::size_t>(max / b, 64))) : 0;
      n = b * k + between(0, 2) - 1;  // b*k - 1, b*k or b*k + 1
    } else {
      std::size_t bits_max = 0;
      while ((std::size_t(2) << bits_max) <= max) ++bits_max;
      const std::size_t top = std::size_t(1) << below(bits_max + 1);
      n = top + below(top);
    }
    return n > max ? max - below(std::min<std::size_t>(max, 1000)) : n;
  }

 private:
  std::uint64_t seed_;
  std::uint64_t next_ = 0;
};

// A range [lo, hi] of int values a sweep draws an input from.
struct value_range {
  int lo, hi;
};

// The value an input's guard holds: read by mistake, it changes the answer.
template <class T>
T input_guard_value();
template <>
inline float input_guard_value<float>() {
  return std::numeric_limits<float>::quiet_NaN();
}
template <>
inline int input_guard_value<int>() {
  return 0x3fffffff;  // odd, positive, and large enough to move any sum or scan it enters
}

// A device array of n elements starting `offset` elements into its allocation (cudaMalloc aligns
// the allocation to 256 bytes, so offset 1 misaligns an int or float array by 4 bytes), with
// `guard` elements after it and the offset's elements before it.
template <class T>
class guarded {
 public:
  // An input: the guards hold guard_value; upload() puts the n elements in.
  static guarded input(std::size_t n, std::size_t offset, T guard_value,
                       std::size_t guard = guard_elements) {
    guarded g(n, offset, guard);
    g.fill_guards(guard_value);
    return g;
  }
  // An output: everything, the n elements included, is poison bytes (0xFF) until the stage writes.
  static guarded output(std::size_t n, std::size_t offset, std::size_t guard = guard_elements) {
    guarded g(n, offset, guard);
    poison_device(g.buf_.get(), g.buf_.size());
    CUDA_CHECK(cudaDeviceSynchronize());
    g.before_ = std::vector<T>(g.buf_.size());
    std::memset(static_cast<void *>(g.before_.data()), poison_byte, g.before_.size() * sizeof(T));
    return g;
  }

  T *get() const { return buf_.get() + offset_; }
  std::size_t size() const { return n_; }
  std::size_t offset() const { return offset_; }

  void upload(const std::vector<T> &h) {
    if (h.size() != n_) throw std::logic_error("guarded::upload: wrong element count");
    if (n_) CUDA_CHECK(cudaMemcpy(get(), h.data(), n_ * sizeof(T), cudaMemcpyHostToDevice));
    // A copy from pageable memory may return before its DMA lands; work on a non-blocking stream
    // would not wait for it and read stale elements.
    CUDA_CHECK(cudaDeviceSynchronize());
    if (n_) std::memcpy(static_cast<void *>(before_.data() + offset_), h.data(), n_ * sizeof(T));
  }
  std::vector<T> download() const {
    std::vector<T> h(n_);
    if (n_) CUDA_CHECK(cudaMemcpy(h.data(), get(), n_ * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
  // "" if every guard element (before and after the array) still holds what it held, else where
  // the first changed one is: "element 3 past the end", "element 1 before the start".
  std::string guard_damage() const {
    const std::vector<T> now = copy_to_host(buf_.get(), buf_.size());
    return guard_zone_damage(now.data(), offset_, n_, guard_,
                             [&](std::size_t i) { return before_[i]; });
  }

 private:
  guarded(std::size_t n, std::size_t offset, std::size_t guard)
      : buf_(offset + n + guard), n_(n), offset_(offset), guard_(guard) {}
  void fill_guards(T value) {
    before_ = std::vector<T>(buf_.size(), value);
    copy_to_device(buf_.get(), before_);
  }
  device_buffer<T> buf_;
  std::size_t n_, offset_, guard_;
  std::vector<T> before_;  // what the whole allocation held after the last upload
};

}  // namespace test
}  // namespace course
