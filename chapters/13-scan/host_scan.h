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

// Segmented scan (13.1), the reference of stage 11: heads[i] != 0 starts a segment at i (element
// 0 starts one whatever its flag), each segment scanned on its own; exclusive gives 0 at a head.
// out may equal in.
inline void host_segmented_scan(int *out, const int *in, const std::uint8_t *heads, std::size_t n,
                                bool inclusive) {
  int sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const int x = in[i];
    if (heads[i]) sum = 0;
    out[i] = inclusive ? wrap_add(sum, x) : sum;
    sum = wrap_add(sum, x);
  }
}

// Stream split (13.1), the reference of stage 12: the elements keep(x) holds for, in order, then
// the others, in order (a stable partition); returns how many were kept. out must not overlap in.
template <class Keep>
std::size_t host_split(int *out, const int *in, std::size_t n, Keep keep) {
  std::size_t kept = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (keep(in[i])) out[kept++] = in[i];
  std::size_t rest = kept;
  for (std::size_t i = 0; i < n; ++i)
    if (!keep(in[i])) out[rest++] = in[i];
  return kept;
}

}  // namespace scan
