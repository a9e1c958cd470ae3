// SPDX-License-Identifier: BSD-3-Clause
// Fill device or host arrays with random.h's deterministic values (element i = f(seed, i)).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace course {

void fill_random_device(float *d, std::size_t n, std::uint64_t seed, float lo = -1.0f,
                        float hi = 1.0f, cudaStream_t stream = nullptr);
void fill_random_device(std::int32_t *d, std::size_t n, std::uint64_t seed, std::int32_t lo,
                        std::int32_t hi, cudaStream_t stream = nullptr);
void fill_random_host(float *h, std::size_t n, std::uint64_t seed, float lo = -1.0f,
                      float hi = 1.0f);
void fill_random_host(std::int32_t *h, std::size_t n, std::uint64_t seed, std::int32_t lo,
                      std::int32_t hi);

// The run's seed: COURSE_SEED if set, else the clock. Every fresh_seed() of a run derives from it,
// so COURSE_SEED=<run_seed()> with the same command replays the whole run (the test main prints it
// when a test fails).
std::uint64_t run_seed();
// A new seed per call (the k-th call of a run: a hash of run_seed() and k), so every check runs on
// fresh data.
std::uint64_t fresh_seed();

}  // namespace course
