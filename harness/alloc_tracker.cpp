// SPDX-License-Identifier: BSD-3-Clause
// Counting wrappers around the CUDA runtime's allocation calls (see alloc_tracker.h). The linker
// option --wrap=cudaMalloc sends every reference to cudaMalloc in the program's objects to
// __wrap_cudaMalloc, and __real_cudaMalloc to the runtime's own; the wrappers record each live
// pointer with its size.
#include "harness/alloc_tracker.h"

#include <cuda_runtime.h>

#include <mutex>
#include <sstream>
#include <unordered_map>

namespace {

struct live_table {
  std::mutex m;
  std::unordered_map<const void *, std::size_t> device, host;
};
live_table &table() {
  static live_table *t = new live_table;  // never destroyed: frees may come from static destructors
  return *t;
}

void record(bool device, const void *p, std::size_t bytes) {
  if (!p) return;
  auto &t = table();
  std::lock_guard<std::mutex> lock(t.m);
  (device ? t.device : t.host)[p] = bytes;
}
void forget(bool device, const void *p) {
  if (!p) return;
  auto &t = table();
  std::lock_guard<std::mutex> lock(t.m);
  (device ? t.device : t.host).erase(p);
}

}  // namespace

extern "C" {
cudaError_t __real_cudaMalloc(void **p, std::size_t bytes);
cudaError_t __real_cudaMallocManaged(void **p, std::size_t bytes, unsigned flags);
cudaError_t __real_cudaMallocPitch(void **p, std::size_t *pitch, std::size_t width,
                                   std::size_t height);
cudaError_t __real_cudaMallocAsync(void **p, std::size_t bytes, cudaStream_t s);
cudaError_t __real_cudaMallocHost(void **p, std::size_t bytes);
cudaError_t __real_cudaHostAlloc(void **p, std::size_t bytes, unsigned flags);
cudaError_t __real_cudaFree(void *p);
cudaError_t __real_cudaFreeAsync(void *p, cudaStream_t s);
cudaError_t __real_cudaFreeHost(void *p);

cudaError_t __wrap_cudaMalloc(void **p, std::size_t bytes) {
  const cudaError_t e = __real_cudaMalloc(p, bytes);
  if (e == cudaSuccess) record(true, *p, bytes);
  return e;
}
cudaError_t __wrap_cudaMallocManaged(void **p, std::size_t bytes, unsigned flags) {
  const cudaError_t e = __real_cudaMallocManaged(p, bytes, flags);
  if (e == cudaSuccess) record(true, *p, bytes);
  return e;
}
cudaError_t __wrap_cudaMallocPitch(void **p, std::size_t *pitch, std::size_t width,
                                   std::size_t height) {
  const cudaError_t e = __real_cudaMallocPitch(p, pitch, width, height);
  if (e == cudaSuccess) record(true, *p, *pitch * height);
  return e;
}
cudaError_t __wrap_cudaMallocAsync(void **p, std::size_t bytes, cudaStream_t s) {
  const cudaError_t e = __real_cudaMallocAsync(p, bytes, s);
  if (e == cudaSuccess) record(true, *p, bytes);
  return e;
}
cudaError_t __wrap_cudaMallocHost(void **p, std::size_t bytes) {
  const cudaError_t e = __real_cudaMallocHost(p, bytes);
  if (e == cudaSuccess) record(false, *p, bytes);
  return e;
}
cudaError_t __wrap_cudaHostAlloc(void **p, std::size_t bytes, unsigned flags) {
  const cudaError_t e = __real_cudaHostAlloc(p, bytes, flags);
  if (e == cudaSuccess) record(false, *p, bytes);
  return e;
}
cudaError_t __wrap_cudaFree(void *p) {
  const cudaError_t e = __real_cudaFree(p);
  if (e == cudaSuccess) forget(true, p);
  return e;
}
cudaError_t __wrap_cudaFreeAsync(void *p, cudaStream_t s) {
  const cudaError_t e = __real_cudaFreeAsync(p, s);
  if (e == cudaSuccess) forget(true, p);
  return e;
}
cudaError_t __wrap_cudaFreeHost(void *p) {
  const cudaError_t e = __real_cudaFreeHost(p);
  if (e == cudaSuccess) forget(false, p);
  return e;
}
}  // extern "C"

namespace course {
namespace test {

allocations live_allocations() {
  auto &t = table();
  std::lock_guard<std::mutex> lock(t.m);
  allocations a;
  a.device_count = t.device.size();
  for (const auto &kv : t.device) a.device_bytes += kv.second;
  a.host_count = t.host.size();
  for (const auto &kv : t.host) a.host_bytes += kv.second;
  return a;
}

bool allocation_tracking_active() {
  // A 1-byte allocation must show up in the table.
  void *p = nullptr;
  if (cudaMalloc(&p, 1) != cudaSuccess) return false;
  const bool seen = live_allocations().device_count > 0;
  cudaFree(p);
  return seen;
}

std::string describe(const allocations &a) {
  std::ostringstream os;
  os << a.device_count << " device allocation(s) (" << a.device_bytes << " bytes), " << a.host_count
     << " page-locked host allocation(s) (" << a.host_bytes << " bytes)";
  return os.str();
}

}  // namespace test
}  // namespace course
