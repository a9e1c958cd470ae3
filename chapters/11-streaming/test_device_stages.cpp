// SPDX-License-Identifier: BSD-3-Clause
// Tests of the device-memory SAXPY stages (01-03). Each test program is built with one stage;
// every check runs on fresh random inputs (the seed is printed on failure; COURSE_SEED replays).
#include "streaming.h"

#include "common/device.h"
#include "common/random.h"
#include "common/random_fill.h"
#include "harness/catch.h"
#include "harness/test_support.h"

#include <cfloat>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

using course::test::guard_elements;

namespace {

const streaming::device_stage &stage_under_test() {
  auto &stages = course::registered<streaming::device_stage>();
  if (stages.size() != 1) throw std::logic_error("a device-stage test program links exactly one stage");
  return stages.front();
}

std::string describe_config(std::size_t n, const streaming::launch_config &cfg, std::size_t offset = 0) {
  return "n=" + std::to_string(n) + " threads=" + std::to_string(cfg.threads) + " blocks=" +
         (cfg.blocks ? std::to_string(cfg.blocks) : std::string("resident")) + " unroll=" + std::to_string(cfg.unroll) +
         (offset ? " offset=" + std::to_string(offset) + " floats" : "");
}

// out = alpha*x + y on n elements at `offset` floats into fresh buffers; every element is checked
// against float64 and the guard zone past the end must stay poisoned.
// Bound: one float32 product and one sum (or one FFMA) round twice at most, so
// |out - ref| <= 2 * FLT_EPSILON * (|alpha*x| + |y|).
void check_saxpy(std::size_t n, const streaming::launch_config &cfg, std::size_t offset = 0) {
  const auto &stage = stage_under_test();
  const std::uint64_t seed = course::fresh_seed();
  const float alpha = course::random_float(seed, 99, 0.5f, 4.0f);
  const std::size_t total = offset + n + guard_elements;
  course::device_buffer<float> x(total), y(total), out(total);
  course::fill_random_device(x.get(), total, seed);
  course::fill_random_device(y.get(), total, seed + 1);
  course::test::poison_device(out.get(), total);
  stage.saxpy(out.get() + offset, x.get() + offset, y.get() + offset, n, alpha, cfg, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());

  std::vector<float> got(total);
  CUDA_CHECK(cudaMemcpy(got.data(), out.get(), total * sizeof(float), cudaMemcpyDeviceToHost));
  auto report = course::test::check_elements(
      n, [&](std::size_t i) { return got[offset + i]; },
      [&](std::size_t i) {
        return alpha * double(course::random_float(seed, offset + i)) + double(course::random_float(seed + 1, offset + i));
      },
      [&](std::size_t i, float g, double want) {
        double scale = std::fabs(alpha * double(course::random_float(seed, offset + i))) +
                       std::fabs(double(course::random_float(seed + 1, offset + i)));
        return course::test::close(g, want, scale, 2 * FLT_EPSILON);
      });
  INFO("seed " << seed << " (COURSE_SEED replays the run)");
  if (!report.ok()) FAIL(course::test::describe(stage.info.id, describe_config(n, cfg, offset), n, report));
  SUCCEED();  // one assertion per checked call, so the summary counts them

  std::size_t written_outside = 0, first_outside = 0;
  for (std::size_t i = 0; i < total; ++i) {
    if (i >= offset && i < offset + n) continue;
    if (!course::test::is_poison(got[i]) && written_outside++ == 0) first_outside = i;
  }
  if (written_outside)
    FAIL("stage " << stage.info.id << ", " << describe_config(n, cfg, offset) << ": wrote " << written_outside
                  << " element(s) outside [0, n); first at index " << long(first_outside) - long(offset));
}

}  // namespace

TEST_CASE("SAXPY matches the float64 reference at awkward sizes and every block size", "[saxpy]") {
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(31), std::size_t(33), std::size_t(1000003),
                        std::size_t((1 << 24) + 7)}) {
    for (int threads : {32, 64, 96, 128, 256, 512, 1000, 1024}) {
      streaming::launch_config cfg;
      cfg.threads = threads;
      check_saxpy(n, cfg);
    }
  }
}

TEST_CASE("SAXPY is right for every unroll factor", "[saxpy][unroll]") {
  if (!stage_under_test().unrolls) return;
  for (int unroll = 1; unroll <= 16; ++unroll) {
    for (std::size_t n : {std::size_t(33), std::size_t(4099), std::size_t(1000003)}) {
      streaming::launch_config cfg;
      cfg.unroll = unroll;
      cfg.threads = 128;
      check_saxpy(n, cfg);
      // A kernel with many registers per thread may not launch 1024 threads per block; the stage
      // must then say so (std::invalid_argument), not fail at launch or compute garbage.
      cfg.threads = 1024;
      try {
        check_saxpy(n, cfg);
      } catch (const std::invalid_argument &e) {
        INFO("unroll " << unroll << " at 1024 threads refused: " << e.what());
        SUCCEED();
      }
    }
  }
}

TEST_CASE("SAXPY is block-agnostic: a tiny grid strides over everything", "[saxpy]") {
  for (int blocks : {1, 7}) {
    streaming::launch_config cfg;
    cfg.blocks = blocks;
    check_saxpy(1000003, cfg);
  }
}

TEST_CASE("SAXPY on arrays that are not 16-byte aligned: right, or refused with a clear error", "[saxpy]") {
  streaming::launch_config cfg;
  try {
    check_saxpy(1000003, cfg, 1);
  } catch (const std::invalid_argument &e) {
    INFO("refused: " << e.what());
    SUCCEED();
  }
}

TEST_CASE("SAXPY past 2^31 elements (64-bit indexing)", "[saxpy][large]") {
  const std::size_t n = (std::size_t(1) << 31) + 17;
  std::size_t free_bytes = 0, total_bytes = 0;
  course::device_memory(free_bytes, total_bytes);
  const std::size_t needed = 3 * (n + guard_elements) * sizeof(float) + (std::size_t(1) << 30);
  if (free_bytes < needed) {
    WARN("skipped n=2^31+17: needs " << needed / (1u << 20) << " MiB of free device memory, " << free_bytes / (1u << 20)
                                     << " MiB free");
    return;
  }
  streaming::launch_config cfg;
  check_saxpy(n, cfg);
}

TEST_CASE("a device stage allocates nothing it does not free", "[saxpy][memory]") {
  const std::size_t n = 1 << 20;
  course::device_buffer<float> x(n), y(n), out(n);
  course::fill_random_device(x.get(), n, 5);
  course::fill_random_device(y.get(), n, 6);
  std::size_t before = 0, after = 0, total = 0;
  CUDA_CHECK(cudaDeviceSynchronize());
  course::device_memory(before, total);
  for (int i = 0; i < 3; ++i) stage_under_test().saxpy(out.get(), x.get(), y.get(), n, 2.0f, {}, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  course::device_memory(after, total);
  CHECK(after == before);
}
