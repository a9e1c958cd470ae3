// SPDX-License-Identifier: BSD-3-Clause
// Ceilings measured on the GPU at hand, so every table can say "% of what this GPU can do"
// without quoting a datasheet.
#include "harness/bench.h"

#include "common/launch.h"
#include "common/random_fill.h"

#include <cub/version.cuh>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace course {
namespace bench {
namespace {

// Four independent 16-byte loads in flight per thread before the first store.
__global__ void copy4_kernel(float4 *__restrict__ out, const float4 *__restrict__ in,
                             std::size_t n4) {
  std::size_t stride = std::size_t(blockDim.x) * gridDim.x;
  std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  for (; i + 3 * stride < n4; i += 4 * stride) {
    float4 a = in[i], b = in[i + stride], c = in[i + 2 * stride], d = in[i + 3 * stride];
    out[i] = a;
    out[i + stride] = b;
    out[i + 2 * stride] = c;
    out[i + 3 * stride] = d;
  }
  for (; i < n4; i += stride) out[i] = in[i];
}

__global__ void read4_kernel(float *sink, const float4 *__restrict__ in, std::size_t n4) {
  std::size_t stride = std::size_t(blockDim.x) * gridDim.x;
  std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  float acc = 0;
  for (; i + 3 * stride < n4; i += 4 * stride) {
    float4 a = in[i], b = in[i + stride], c = in[i + 2 * stride], d = in[i + 3 * stride];
    acc += (a.x + a.y + a.z + a.w) + (b.x + b.y + b.z + b.w) + (c.x + c.y + c.z + c.w) +
           (d.x + d.y + d.z + d.w);
  }
  for (; i < n4; i += stride) acc += in[i].x + in[i].y + in[i].z + in[i].w;
  if (acc == 12345.678f) *sink = acc;  // keeps the loads alive; (almost) never true
}

constexpr int fma_chains = 8;
constexpr int fma_iterations = 4096;

__global__ void fma_kernel(float *sink, float seed) {
  float v[fma_chains];
#pragma unroll
  for (int c = 0; c < fma_chains; ++c) v[c] = seed + threadIdx.x + c;
  for (int it = 0; it < fma_iterations; ++it) {
#pragma unroll
    for (int c = 0; c < fma_chains; ++c) v[c] = fmaf(v[c], 0.999999f, 1e-7f);
  }
  float s = 0;
#pragma unroll
  for (int c = 0; c < fma_chains; ++c) s += v[c];
  if (s == 12345.678f) *sink = s;
}

// Independent __dp4a chains in registers (IDP4A: four 8-bit products added into 32 bits). Each
// chain feeds its own value back as an operand, so the compiler cannot fold the loop.
constexpr int dp4a_chains = 8;
constexpr int dp4a_iterations = 4096;

__global__ void dp4a_kernel(int *sink, int seed) {
  int v[dp4a_chains];
  const int b = 0x01020304 ^ int(threadIdx.x);
#pragma unroll
  for (int c = 0; c < dp4a_chains; ++c) v[c] = seed + int(threadIdx.x) + c;
  for (int it = 0; it < dp4a_iterations; ++it) {
#pragma unroll
    for (int c = 0; c < dp4a_chains; ++c) v[c] = __dp4a(v[c], b, v[c]);
  }
  int s = 0;
#pragma unroll
  for (int c = 0; c < dp4a_chains; ++c) s ^= v[c];
  if (s == 12345678) *sink = s;
}

// Steps of one MUFU.RSQ and 11 FP32-pipe instructions (one FADD, then 10 FFMA that need the
// root: stage 08's count per interaction), in `Chains` independent chains per thread, all in
// registers: the instruction mix of an N-body interaction with no memory instruction, no barrier
// and almost no loop control. rsqrt.approx.ftz.f32 is the course's N-body root (one MUFU.RSQ,
// nbody::reciprocal_sqrt). The FFMAs multiply by an immediate (two source registers each), or,
// with ThreeRegisters, by one of four values loaded into registers before the loop (three source
// registers each, as most of the interaction's FFMAs read): the same instructions, other operands.
constexpr int rsqrt_mix_iterations = 2048;
constexpr int rsqrt_mix_fp32 = 11;

template <int Chains, bool ThreeRegisters>
__global__ void rsqrt_mix_kernel(float *sink, const float *multipliers, float seed) {
  float m[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) m[k] = ThreeRegisters ? multipliers[k] : 0.999f;
  float v[Chains];
#pragma unroll
  for (int c = 0; c < Chains; ++c) v[c] = seed + 1e-3f * float(threadIdx.x + c);
  for (int it = 0; it < rsqrt_mix_iterations; ++it) {
#pragma unroll
    for (int c = 0; c < Chains; ++c) {
      float r;
      asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v[c] + 1.0f));
      float a = v[c];
#pragma unroll
      for (int q = 0; q < rsqrt_mix_fp32 - 1; ++q) a = fmaf(a, m[q % 4], r);
      v[c] = a;
    }
  }
  float s = 0;
#pragma unroll
  for (int c = 0; c < Chains; ++c) s += v[c];
  if (s == 12345.678f) *sink = s;
}

template <int Chains, bool ThreeRegisters>
double rsqrt_mix_rate() {
  device_buffer<float> sink(1), multipliers(4);
  const float m[4] = {0.999f, 0.998f, 0.997f, 0.996f};
  CUDA_CHECK(cudaMemcpy(multipliers.get(), m, sizeof m, cudaMemcpyHostToDevice));
  const int blocks = resident_blocks(rsqrt_mix_kernel<Chains, ThreeRegisters>, 256) * 4;
  stream s;
  timing t = time_device(
      [&](cudaStream_t st) {
        rsqrt_mix_kernel<Chains, ThreeRegisters>
            <<<blocks, 256, 0, st>>>(sink.get(), multipliers.get(), 1.0f);
        CUDA_CHECK_LAUNCH();
      },
      s);
  return double(Chains) * rsqrt_mix_iterations * double(blocks) * 256 / (t.median_ms * 1e-3);
}

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// The FMA chains of fma_kernel for `iterations`, thread 0 of each block timing its block in SM
// cycles and in global nanoseconds.
__global__ void clock_kernel(unsigned long long *cycles, unsigned long long *ns, float *sink,
                             int iterations) {
  const long long c0 = clock64();
  const unsigned long long g0 = global_ns();
  float v[fma_chains];
#pragma unroll
  for (int c = 0; c < fma_chains; ++c) v[c] = threadIdx.x + c;
  for (int it = 0; it < iterations; ++it) {
#pragma unroll
    for (int c = 0; c < fma_chains; ++c) v[c] = fmaf(v[c], 0.999999f, 1e-7f);
  }
  float s = 0;
#pragma unroll
  for (int c = 0; c < fma_chains; ++c) s += v[c];
  if (s == 12345.678f) *sink = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    cycles[blockIdx.x] = static_cast<unsigned long long>(clock64() - c0);
    ns[blockIdx.x] = global_ns() - g0;
  }
}

}  // namespace

double sustained_sm_clock_mhz() {
  const int blocks =
      resident_blocks(clock_kernel, 256);  // one wave: every block runs from start to end
  device_buffer<unsigned long long> cycles(blocks), ns(blocks);
  device_buffer<float> sink(1);
  // 2^17 iterations of 8 FMA chains: about 15 ms at 2 GHz with 2048 threads per SM.
  for (int pass = 0; pass < 2; ++pass) {  // the first pass ramps the clocks up
    clock_kernel<<<blocks, 256>>>(cycles.get(), ns.get(), sink.get(), 1 << 17);
    CUDA_CHECK_LAUNCH();
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<unsigned long long> c(blocks), t(blocks);
  CUDA_CHECK(cudaMemcpy(c.data(), cycles.get(), blocks * sizeof(unsigned long long),
                        cudaMemcpyDeviceToHost));
  CUDA_CHECK(
      cudaMemcpy(t.data(), ns.get(), blocks * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  std::vector<double> mhz;
  for (int b = 0; b < blocks; ++b)
    if (t[b] > 0) mhz.push_back(1e3 * double(c[b]) / double(t[b]));
  return describe(mhz).median;
}

double event_pair_floor_ms() {
  stream s;
  event a, b;
  std::vector<double> ms;
  for (int i = 0; i < 111; ++i) {
    CUDA_CHECK(cudaEventRecord(a, s));
    CUDA_CHECK(cudaEventRecord(b, s));
    const double t = elapsed_ms(a, b);
    if (i >= 10) ms.push_back(t);  // the first pairs warm the path up
  }
  return describe(ms).median;
}

std::string cccl_version() {
  return std::to_string(CUB_MAJOR_VERSION) + "." + std::to_string(CUB_MINOR_VERSION) + "." +
         std::to_string(CUB_SUBMINOR_VERSION);
}

double d2d_memcpy_gbs(std::size_t bytes) {
  device_buffer<char> a(bytes), b(bytes);
  fill_random_device(reinterpret_cast<float *>(a.get()), bytes / 4, 1);
  stream s;
  timing t = time_device(
      [&](cudaStream_t st) {
        CUDA_CHECK(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice, st));
      },
      s);
  return 2.0 * bytes / (t.median_ms * 1e6);
}

double copy_kernel_gbs(std::size_t bytes) {
  std::size_t n4 = bytes / 16;
  device_buffer<float4> a(n4), b(n4);
  fill_random_device(reinterpret_cast<float *>(a.get()), n4 * 4, 2);
  int blocks = resident_blocks(copy4_kernel, 256);
  stream s;
  timing t = time_device(
      [&](cudaStream_t st) {
        copy4_kernel<<<blocks, 256, 0, st>>>(b.get(), a.get(), n4);
        CUDA_CHECK_LAUNCH();
      },
      s);
  return 2.0 * n4 * 16 / (t.median_ms * 1e6);
}

double read_kernel_gbs(std::size_t bytes) {
  std::size_t n4 = bytes / 16;
  device_buffer<float4> a(n4);
  device_buffer<float> sink(1);
  fill_random_device(reinterpret_cast<float *>(a.get()), n4 * 4, 3);
  int blocks = resident_blocks(read4_kernel, 256);
  stream s;
  timing t = time_device(
      [&](cudaStream_t st) {
        read4_kernel<<<blocks, 256, 0, st>>>(sink.get(), a.get(), n4);
        CUDA_CHECK_LAUNCH();
      },
      s);
  return 1.0 * n4 * 16 / (t.median_ms * 1e6);
}

double fma_tflops() {
  device_buffer<float> sink(1);
  int blocks = resident_blocks(fma_kernel, 256) * 4;
  stream s;
  timing t = time_device(
      [&](cudaStream_t st) {
        fma_kernel<<<blocks, 256, 0, st>>>(sink.get(), 1.0f);
        CUDA_CHECK_LAUNCH();
      },
      s);
  double flops = 2.0 * fma_chains * fma_iterations * double(blocks) * 256;
  return flops / (t.median_ms * 1e9);
}

double rsqrt_mix_per_s(int chains, bool three_registers) {
  switch (chains) {
    case 1: return three_registers ? rsqrt_mix_rate<1, true>() : rsqrt_mix_rate<1, false>();
    case 2: return three_registers ? rsqrt_mix_rate<2, true>() : rsqrt_mix_rate<2, false>();
    case 4: return three_registers ? rsqrt_mix_rate<4, true>() : rsqrt_mix_rate<4, false>();
    case 8: return three_registers ? rsqrt_mix_rate<8, true>() : rsqrt_mix_rate<8, false>();
    default:
      throw std::invalid_argument("rsqrt_mix_per_s: chains must be 1, 2, 4 or 8, not " +
                                  std::to_string(chains));
  }
}

double dp4a_per_s() {
  device_buffer<int> sink(1);
  int blocks = resident_blocks(dp4a_kernel, 256) * 4;
  stream s;
  timing t = time_device(
      [&](cudaStream_t st) {
        dp4a_kernel<<<blocks, 256, 0, st>>>(sink.get(), 1);
        CUDA_CHECK_LAUNCH();
      },
      s);
  return double(dp4a_chains) * dp4a_iterations * double(blocks) * 256 / (t.median_ms * 1e-3);
}

pcie_rates pinned_copy_rates(std::size_t bytes) {
  host_buffer<char> h_up(bytes, host_memory::pinned), h_down(bytes, host_memory::pinned);
  device_buffer<char> d_up(bytes), d_down(bytes);
  std::memset(h_up.get(), 1, bytes);
  stream up, down;
  pcie_rates r;
  timing t = time_device(
      [&](cudaStream_t st) {
        CUDA_CHECK(cudaMemcpyAsync(d_up.get(), h_up.get(), bytes, cudaMemcpyHostToDevice, st));
      },
      up, 1, 5);
  r.h2d_gbs = bytes / (t.median_ms * 1e6);
  t = time_device(
      [&](cudaStream_t st) {
        CUDA_CHECK(cudaMemcpyAsync(h_down.get(), d_down.get(), bytes, cudaMemcpyDeviceToHost, st));
      },
      down, 1, 5);
  r.d2h_gbs = bytes / (t.median_ms * 1e6);
  // Both directions at once: the second stream waits on an event recorded in the first, so both
  // copies start together and the events of `up` bracket the pair.
  event go, down_done;
  t = time_device(
      [&](cudaStream_t st) {
        CUDA_CHECK(cudaEventRecord(go, st));
        CUDA_CHECK(cudaStreamWaitEvent(down, go, 0));
        CUDA_CHECK(
            cudaMemcpyAsync(h_down.get(), d_down.get(), bytes, cudaMemcpyDeviceToHost, down));
        CUDA_CHECK(cudaEventRecord(down_done, down));
        CUDA_CHECK(cudaMemcpyAsync(d_up.get(), h_up.get(), bytes, cudaMemcpyHostToDevice, st));
        CUDA_CHECK(cudaStreamWaitEvent(st, down_done, 0));
      },
      up, 1, 5);
  r.both_gbs = 2.0 * bytes / (t.median_ms * 1e6);
  return r;
}

}  // namespace bench
}  // namespace course
