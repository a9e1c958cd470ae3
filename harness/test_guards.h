// SPDX-License-Identifier: BSD-3-Clause
// The checks every chapter's GPU tests make around one call of a stage, in one place:
//   - random inputs (random_ints, random_floats) and guarded copies of them on the device;
//   - after the call: the input's guards intact and its elements unchanged
//     (check_input_untouched), nothing written outside an output (check_output_guards);
//   - a device answer slot for reductions, poisoned, with a poisoned guard zone after it;
//   - what a wrong int answer most likely did (guard_hint, got_text);
//   - the GPU's size (resident_threads) and whether a large case fits (has_free_device_memory).
// A failure is one Catch2 FAIL whose message starts with `who`, the caller's description of the
// call (stage, size, configuration, placement).
#pragma once

#include "harness/catch.h"
#include "harness/sweep.h"
#include "harness/test_support.h"

#include "common/check.h"
#include "common/device.h"
#include "common/memory.h"
#include "common/random_fill.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace course {
namespace test {

// n random ints in [lo, hi] and n random floats in [lo, hi) from `seed` (common/random_fill.h).
inline std::vector<int> random_ints(std::size_t n, std::uint64_t seed, int lo, int hi) {
  std::vector<int> v(n);
  fill_random_host(v.data(), n, seed, lo, hi);
  return v;
}
inline std::vector<float> random_floats(std::size_t n, std::uint64_t seed, float lo = -1.0f,
                                        float hi = 1.0f) {
  std::vector<float> v(n);
  fill_random_host(v.data(), n, seed, lo, hi);
  return v;
}

// A device copy of h placed `offset` elements into its allocation, its guards holding `guard`.
template <class T>
guarded<T> guarded_input(const std::vector<T> &h, std::size_t offset, T guard) {
  auto g = guarded<T>::input(h.size(), offset, guard);
  g.upload(h);
  return g;
}
template <class T>
guarded<T> guarded_input(const std::vector<T> &h, std::size_t offset = 0) {
  return guarded_input(h, offset, input_guard_value<T>());
}

// After a call: the input's guards intact (checked first) and its elements still h, byte for byte
// (a float NaN compares equal to itself here).
template <class T>
void check_input_untouched(const std::string &who, const guarded<T> &in, const std::vector<T> &h) {
  const std::string damage = in.guard_damage();
  if (!damage.empty()) FAIL(who << ": the input's guard changed (" << damage << ")");
  const std::vector<T> now = in.download();
  if (now.size() != h.size() ||
      (!h.empty() && std::memcmp(now.data(), h.data(), h.size() * sizeof(T)) != 0))
    FAIL(who << ": the input was modified");
}

// After a call: the poisoned guards around an output still poison.
template <class T>
void check_output_guards(const std::string &who, const guarded<T> &out) {
  const std::string damage = out.guard_damage();
  if (!damage.empty()) FAIL(who << ": wrote outside the output (" << damage << ")");
}

// A device answer slot followed by a guard zone, poisoned (0xFF bytes: the int -1).
template <class T>
struct answer_slot {
  device_buffer<T> buf{1 + guard_elements};
  answer_slot() {
    poison_device(buf.get(), buf.size());
    // The poison is written on the legacy default stream; a call on a non-blocking stream would
    // not wait for it.
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  T *get() const { return buf.get(); }
  // The answer, after checking that nothing past it was written (guard elements count from 1).
  T read(const std::string &who) const {
    const std::vector<T> h = copy_to_host(buf.get(), buf.size());
    const std::size_t written = first_written(h, 1);
    if (written != h.size())
      FAIL(who << ": wrote past the answer, at element " << written << " of the guard zone");
    return h[0];
  }
};

// An int answer as a message shows it: the poison (-1) is named.
inline std::string got_text(int got) {
  return got == -1 ? "-1 (the poison: never written?)" : std::to_string(got);
}

// k when got - want is k times `guard` (mod 2^32) for some 0 < |k| <= max_k, else 0: the stage
// most likely read k guard elements into its sum.
inline int guard_multiple(int got, int want, int guard, int max_k) {
  const std::uint32_t diff = std::uint32_t(got) - std::uint32_t(want);
  for (int k = -max_k; k <= max_k; ++k)
    if (k && diff == std::uint32_t(k) * std::uint32_t(guard)) return k;
  return 0;
}
inline std::string hex(int v) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%x", static_cast<unsigned>(v));
  return text;
}
// What an int sum that is off by a multiple (up to 4) of its input's guard most likely did.
inline std::string guard_hint(int got, int want, int guard) {
  const int k = guard_multiple(got, want, guard, 4);
  if (!k) return "";
  return " (off by " + std::to_string(k) + " x the input's guard value " + hex(guard) +
         ": it read " + std::to_string(k < 0 ? -k : k) + " element(s) outside [0, n))";
}

// Threads the GPU holds at once in blocks of `threads` (as many blocks per SM as its resident
// threads allow, at most 32): where a grid-stride loop over a resident grid starts its second
// pass. With blocks of 256 it is SMs x resident threads per SM (1024, 1536 or 2048).
inline std::size_t resident_threads(int threads = 256) {
  int device = 0, sms = 0, per_sm = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
  return std::size_t(sms) * std::size_t(std::min(per_sm / threads, 32)) * std::size_t(threads);
}

// Whether `needed` bytes of device memory are free; if not, a warning that `what` was skipped
// (a [large] case on a small GPU is skipped, not failed).
inline bool has_free_device_memory(std::size_t needed, const std::string &what) {
  std::size_t free_bytes = 0, total_bytes = 0;
  device_memory(free_bytes, total_bytes);
  if (free_bytes >= needed) return true;
  WARN("skipped " << what << ": needs " << needed / (1u << 20) << " MiB of free device memory, "
                  << free_bytes / (1u << 20) << " MiB free");
  return false;
}

}  // namespace test
}  // namespace course
