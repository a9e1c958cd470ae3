// SPDX-License-Identifier: BSD-3-Clause
// Lesson header of stage 09_cpu_simd (The CUDA Handbook 14.7, listings 14.8 and 14.9): the SIMD
// row, written once for every instruction set. 09_cpu_simd.cu includes it three times, inside
// namespaces sse, avx2 and avx512, each with V the vector operations of that set (sse_ops,
// avx2_ops, avx512_ops: V::vec, V::width lanes, set1, load, sub, mul, fmadd(a, b, c) = a b + c,
// fnmadd(a, b, c) = c - a b, rsqrt_estimate, sum of the lanes) and compiled for that set alone.
// So there is no include guard, and this file includes nothing itself.
// (Host code only: the build compiles stage 09 as C++.)

// force[i] from the SOA copy b (x, y, z, m, padded with zero-mass bodies to a multiple of 16).
inline float4 row(const soa &b, std::size_t i, float softening2) {
  // EXERCISE BEGIN: body i's force from every body, V::width at a time, with a reciprocal square
  // root accurate to float.
  COURSE_TODO();
  // EXERCISE END
}
