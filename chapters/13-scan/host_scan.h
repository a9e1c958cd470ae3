// SPDX-License-Identifier: BSD-3-Clause
// Chapter 13, scan (13.2): the host's inclusive and exclusive scans, the reference every GPU test
// and the benchmark compare against. Ints are added in 32-bit two's complement (wrap-around), as
// the GPU adds them, so the GPU's answer must equal these exactly whatever order it adds in.
#pragma once

#include <cstddef>
#include <cstdint>

namespace scan {

// a + b mod 2^32, without the undefined behaviour of signed overflow.
inline int wrap_add(int a, int b) {
  return static_cast<int>(static_cast<std::uint32_t>(a) + static_cast<std::uint32_t>(b));
}

// out[i] = in[0] + ... + in[i]. out may equal in (in place).
inline void host_inclusive_scan(int *out, const int *in, std::size_t n) {
  int sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sum = wrap_add(sum, in[i]);
    out[i] = sum;
  }
}

// out[i] = in[0] + ... + in[i-1], out[0] = 0. out may equal in (in place): each input is read
// before its slot is written.
inline void host_exclusive_scan(int *out, const int *in, std::size_t n) {
  int sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const int x = in[i];
    out[i] = sum;
    sum = wrap_add(sum, x);
  }
}

inline void host_scan(int *out, const int *in, std::size_t n, bool inclusive) {
  if (inclusive) host_inclusive_scan(out, in, n);
  else host_exclusive_scan(out, in, n);
}

}  // namespace scan
