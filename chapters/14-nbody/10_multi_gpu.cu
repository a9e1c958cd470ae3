// SPDX-License-Identifier: BSD-3-Clause
// Stage 10: several GPUs. The CUDA Handbook 14.6 (and the multi-GPU patterns of chapter 9).
//
// Your task: the rows of the force matrix are cut into parts (part p of k: rows
// [n p / k, n (p + 1) / k), any n), dealt round-robin to the visible GPUs, one host thread each;
// the bodies and the forces are in portable pinned host memory. Write what one GPU does: bring
// the bodies over, compute the rows of each of its parts with stage 07's kernel (your
// lesson_register_blocked.cuh), and put those forces back in place in the host array before
// returning. Watch for: the tests ask every split (2, 3, 5 parts, on one GPU too) to give the same
// bits as one part, so each row must be computed by the same code in the same order whatever the
// split; and, in the bench's multi_gpu table, what does not shrink with more GPUs.
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
  COURSE_TODO();
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
