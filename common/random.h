// SPDX-License-Identifier: BSD-3-Clause
// Deterministic random data, the same on host and device: element i of stream `seed` is a hash of
// (seed, i), so a kernel can fill a 10 GB input and the host can recompute any element for the
// reference without storing the input.
#pragma once

#include <cstddef>
#include <cstdint>

#ifdef __CUDACC__
#define COURSE_HD __host__ __device__
#else
#define COURSE_HD
#endif

namespace course {

// splitmix64's finaliser: a bijection on 64 bits with good avalanche.
COURSE_HD inline std::uint64_t mix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

COURSE_HD inline std::uint64_t random_bits(std::uint64_t seed, std::uint64_t i) {
  return mix64(mix64(seed) ^ i);
}

// Uniform in [lo, hi), 24 random bits: never all zeros, negative values when lo < 0.
COURSE_HD inline float random_float(std::uint64_t seed, std::uint64_t i, float lo = -1.0f,
                                    float hi = 1.0f) {
  float u = static_cast<float>(random_bits(seed, i) >> 40) * (1.0f / 16777216.0f);
  return lo + (hi - lo) * u;
}

// Uniform integer in [lo, hi].
COURSE_HD inline std::int32_t random_int(std::uint64_t seed, std::uint64_t i, std::int32_t lo,
                                         std::int32_t hi) {
  std::uint64_t span = static_cast<std::uint64_t>(static_cast<std::int64_t>(hi) - lo) + 1;
  return static_cast<std::int32_t>(lo + static_cast<std::int64_t>(random_bits(seed, i) % span));
}

}  // namespace course
