// SPDX-License-Identifier: BSD-3-Clause
// RAII owners for device memory, page-locked (pinned, optionally mapped) host memory, streams and
// events: whatever a stage, test or benchmark allocates is released on every path, exceptions
// included, so "each stage's memory is released" holds by construction and can be tested.
#pragma once

#include "common/check.h"

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

namespace course {

template <class T>
class device_buffer {
 public:
  device_buffer() = default;
  explicit device_buffer(std::size_t count) : count_(count) {
    if (count) CUDA_CHECK(cudaMalloc(&ptr_, count * sizeof(T)));
  }
  ~device_buffer() { release(); }
  device_buffer(device_buffer &&o) noexcept { swap(o); }
  device_buffer &operator=(device_buffer &&o) noexcept {
    release();
    swap(o);
    return *this;
  }
  device_buffer(const device_buffer &) = delete;
  device_buffer &operator=(const device_buffer &) = delete;

  T *get() const { return ptr_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  void release() noexcept {
    if (ptr_) cudaFree(ptr_);
    ptr_ = nullptr;
    count_ = 0;
  }
  void swap(device_buffer &o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(count_, o.count_);
  }
  T *ptr_ = nullptr;
  std::size_t count_ = 0;
};

// Host memory of a chosen kind. Pageable memory is what malloc gives (the copy engines cannot
// read it directly, so the driver stages it); pinned is page-locked (DMA-able, needed for
// asynchronous copies); mapped is pinned and also addressable by kernels (zero-copy).
enum class host_memory { pageable, pinned, mapped };

inline const char *to_string(host_memory m) {
  switch (m) {
    case host_memory::pageable: return "pageable";
    case host_memory::pinned: return "pinned";
    case host_memory::mapped: return "mapped";
  }
  return "?";
}

template <class T>
class host_buffer {
 public:
  host_buffer() = default;
  host_buffer(std::size_t count, host_memory kind) : count_(count), kind_(kind) {
    if (!count) return;
    if (kind == host_memory::pageable) {
      ptr_ = static_cast<T *>(::operator new(count * sizeof(T)));
    } else {
      unsigned flags = kind == host_memory::mapped ? (cudaHostAllocMapped | cudaHostAllocPortable)
                                                   : cudaHostAllocPortable;
      CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void **>(&ptr_), count * sizeof(T), flags));
    }
  }
  ~host_buffer() { release(); }
  host_buffer(host_buffer &&o) noexcept { swap(o); }
  host_buffer &operator=(host_buffer &&o) noexcept {
    release();
    swap(o);
    return *this;
  }
  host_buffer(const host_buffer &) = delete;
  host_buffer &operator=(const host_buffer &) = delete;

  T *get() const { return ptr_; }
  T &operator[](std::size_t i) const { return ptr_[i]; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }
  host_memory kind() const { return kind_; }

 private:
  void release() noexcept {
    if (ptr_) {
      if (kind_ == host_memory::pageable) ::operator delete(ptr_);
      else cudaFreeHost(ptr_);
    }
    ptr_ = nullptr;
    count_ = 0;
  }
  void swap(host_buffer &o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(count_, o.count_);
    std::swap(kind_, o.kind_);
  }
  T *ptr_ = nullptr;
  std::size_t count_ = 0;
  host_memory kind_ = host_memory::pageable;
};

class stream {
 public:
  stream() { CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~stream() {
    if (s_) cudaStreamDestroy(s_);
  }
  stream(stream &&o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  stream &operator=(stream &&o) noexcept {
    std::swap(s_, o.s_);
    return *this;
  }
  stream(const stream &) = delete;
  stream &operator=(const stream &) = delete;
  operator cudaStream_t() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

class event {
 public:
  event() { CUDA_CHECK(cudaEventCreate(&e_)); }
  ~event() {
    if (e_) cudaEventDestroy(e_);
  }
  event(event &&o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  event &operator=(event &&o) noexcept {
    std::swap(e_, o.e_);
    return *this;
  }
  event(const event &) = delete;
  event &operator=(const event &) = delete;
  operator cudaEvent_t() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

// Milliseconds between two recorded events (waits for the second).
inline float elapsed_ms(cudaEvent_t start, cudaEvent_t stop) {
  CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  return ms;
}

}  // namespace course
