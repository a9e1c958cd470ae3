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
  const V::vec x0 = V::set1(b.x[i]), y0 = V::set1(b.y[i]), z0 = V::set1(b.z[i]);
  const V::vec soft = V::set1(softening2), half = V::set1(0.5f), three_halves = V::set1(1.5f);
  V::vec ax = V::set1(0.f), ay = V::set1(0.f), az = V::set1(0.f);
  for (std::size_t j = 0; j < b.padded(); j += V::width) {
    const V::vec dx = V::sub(V::load(&b.x[j]), x0);
    const V::vec dy = V::sub(V::load(&b.y[j]), y0);
    const V::vec dz = V::sub(V::load(&b.z[j]), z0);
    const V::vec d2 = V::fmadd(dx, dx, V::fmadd(dy, dy, V::fmadd(dz, dz, soft)));
    V::vec inv = V::rsqrt_estimate(d2);
    inv = V::mul(inv, V::fnmadd(V::mul(half, d2), V::mul(inv, inv), three_halves));
    const V::vec s = V::mul(V::load(&b.m[j]), V::mul(inv, V::mul(inv, inv)));
    ax = V::fmadd(dx, s, ax);
    ay = V::fmadd(dy, s, ay);
    az = V::fmadd(dz, s, az);
  }
  return float4{V::sum(ax), V::sum(ay), V::sum(az), 0.f};
  // EXERCISE END
}
