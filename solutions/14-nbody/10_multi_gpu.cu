// SPDX-License-Identifier: BSD-3-Clause
// Stage 10: several GPUs. The CUDA Handbook 14.6 (and the multi-GPU patterns of chapter 9).
//
// Changes from stage 07: the rows are split across every visible GPU. Bodies and forces live in
// portable pinned host memory; one host thread per GPU copies all n bodies over, computes its rows
// with stage 07's kernel (lesson_register_blocked.cuh: your code) and copies them back. Parts are
// as even as integers allow, so any n works (the book's needs a multiple of the GPU count); the
// forces of any split equal those of one part bit for bit, which the tests check.
// What to look for: in the timing, the bench's multi_gpu table (1..all GPUs at N = 256K, with the
// efficiency); each GPU's copies are O(N), its work O(N^2 / GPUs). On one GPU the table shows the
// cost of running several parts in turn, not of the split.
#include "lesson_register_blocked.cuh"

#include "common/check.h"
#include "common/memory.h"

#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace {

constexpr int rows_per_thread = 2;
constexpr int threads = 128;

// Rows [begin, end) of part p of k.
inline std::size_t part_begin(std::size_t n, int p, int k) {
  return n * std::size_t(p) / std::size_t(k);
}

// What one GPU does: all bodies in, the rows of its parts computed, those forces out.
void gpu_worker(int device, const std::vector<int> &parts, int k, float4 *h_force,
                const float4 *h_body, std::size_t n, float softening2) {
  CUDA_CHECK(cudaSetDevice(device));
  // EXERCISE BEGIN: the forces of this GPU's parts, computed with stage 07's kernel, in place in
  // h_force when this returns, the same bits whatever the split.
  course::stream stream;
  course::device_buffer<float4> d_body(n);
  std::size_t most = 0;
  for (int p : parts) most = std::max(most, part_begin(n, p + 1, k) - part_begin(n, p, k));
  course::device_buffer<float4> d_force(most ? most : 1);
  CUDA_CHECK(
      cudaMemcpyAsync(d_body.get(), h_body, n * sizeof(float4), cudaMemcpyHostToDevice, stream));
  for (int p : parts) {
    const std::size_t begin = part_begin(n, p, k), rows = part_begin(n, p + 1, k) - begin;
    if (rows == 0) continue;
    nbody::launch_register_blocked<nbody::listing_14_1_form, rows_per_thread, threads, 8>(
        d_force.get(), d_body.get(), n, begin, rows, 1, softening2, stream);
    CUDA_CHECK(cudaMemcpyAsync(h_force + begin, d_force.get(), rows * sizeof(float4),
                               cudaMemcpyDeviceToHost, stream));
  }
  CUDA_CHECK(cudaStreamSynchronize(stream));
  // EXERCISE END
}

void forces_host(float4 *h_force, const float4 *h_body, std::size_t n, float softening2,
                 const nbody::config &cfg) {
  nbody::require(cfg);
  if (n == 0) return;
  int visible = 0;
  CUDA_CHECK(cudaGetDeviceCount(&visible));
  const int gpus = cfg.gpus > 0 ? std::min(cfg.gpus, visible) : visible;
  const int k = cfg.parts > 0 ? cfg.parts : gpus;
  int caller_device = 0;
  CUDA_CHECK(cudaGetDevice(&caller_device));
  std::vector<std::vector<int>> parts(gpus);
  for (int p = 0; p < k; ++p) parts[p % gpus].push_back(p);
  // One host thread per GPU; an error in one (CUDA_CHECK throws) is rethrown here after all joined.
  std::vector<std::thread> workers;
  std::exception_ptr error;
  std::mutex m;
  for (int g = 0; g < gpus; ++g) {
    if (parts[g].empty()) continue;
    workers.emplace_back([&, g] {
      try {
        gpu_worker(g, parts[g], k, h_force, h_body, n, softening2);
      } catch (...) {
        std::lock_guard<std::mutex> lock(m);
        if (!error) error = std::current_exception();
      }
    });
  }
  for (auto &t : workers) t.join();
  CUDA_CHECK(cudaSetDevice(caller_device));
  if (error) std::rethrow_exception(error);
}

}  // namespace

NBODY_STAGE("rows split across GPUs (14.6)", nullptr, forces_host, false, false);
