// SPDX-License-Identifier: BSD-3-Clause
// Tests of the host-memory SAXPY stages (04-07): the arrays live in host memory of the stage's
// kind (pageable, pinned or mapped); results are checked element by element, with a poisoned
// guard zone past the end of the output.
#include "host_context.h"
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

using course::test::guard_elements;

namespace {

constexpr int max_streams = 8;

const streaming::host_stage &stage_under_test() {
  auto &stages = course::registered<streaming::host_stage>();
  if (stages.size() != 1) throw std::logic_error("a host-stage test program links exactly one stage");
  return stages.front();
}

// Bound as for the device stages: |out - ref| <= 2 * FLT_EPSILON * (|alpha*x| + |y|).
void check_streamed(std::size_t n, int streams, streaming::owned_host_context &owned) {
  const auto &stage = stage_under_test();
  const std::uint64_t seed = course::fresh_seed();
  const float alpha = course::random_float(seed, 99, 0.5f, 4.0f);
  const std::size_t total = n + guard_elements;
  course::host_buffer<float> x(total, stage.memory), y(total, stage.memory), out(total, stage.memory);
  course::fill_random_host(x.get(), total, seed);
  course::fill_random_host(y.get(), total, seed + 1);
  course::test::poison_host(out.get(), total);
  auto &ctx = owned.get();
  ctx.n_streams = streams;
  stage.saxpy(out.get(), x.get(), y.get(), n, alpha, ctx);

  auto report = course::test::check_elements(
      n, [&](std::size_t i) { return out[i]; }, [&](std::size_t i) { return alpha * double(x[i]) + double(y[i]); },
      [&](std::size_t i, float g, double want) {
        return course::test::close(g, want, std::fabs(alpha * double(x[i])) + std::fabs(double(y[i])), 2 * FLT_EPSILON);
      });
  const std::string what = "n=" + std::to_string(n) + " streams=" + std::to_string(streams) + " memory=" +
                           course::to_string(stage.memory);
  INFO("seed " << seed << " (COURSE_SEED replays the run)");
  if (!report.ok()) FAIL(course::test::describe(stage.info.id, what, n, report));
  SUCCEED();  // one assertion per checked call, so the summary counts them
  for (std::size_t i = n; i < total; ++i)
    if (!course::test::is_poison(out[i])) FAIL("stage " << stage.info.id << ", " << what << ": wrote past the end, at index " << i);
}

}  // namespace

TEST_CASE("streamed SAXPY matches the float64 reference", "[streamed]") {
  const std::size_t large = (std::size_t(1) << 25) + 3;
  streaming::owned_host_context owned(large, max_streams);
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(31), std::size_t(1000003), large})
    check_streamed(n, 1, owned);
}

TEST_CASE("streamed SAXPY with 1..8 streams, n not divisible by the stream count", "[streamed][streams]") {
  streaming::owned_host_context owned(1000003, max_streams);
  for (int streams = 1; streams <= max_streams; ++streams)
    for (std::size_t n : {std::size_t(1), std::size_t(5), std::size_t(1000), std::size_t(1000003)}) check_streamed(n, streams, owned);
}

TEST_CASE("phase timings, where a stage records them, are consistent", "[streamed]") {
  const std::size_t n = 1 << 22;
  streaming::owned_host_context owned(n, max_streams);
  check_streamed(n, 1, owned);
  auto &ctx = owned.get();
  if (!ctx.phases) return;
  float h2d = course::elapsed_ms(ctx.ev_start, ctx.ev_h2d), kernel = course::elapsed_ms(ctx.ev_h2d, ctx.ev_kernel),
        d2h = course::elapsed_ms(ctx.ev_kernel, ctx.ev_d2h), all = course::elapsed_ms(ctx.ev_start, ctx.ev_d2h);
  CHECK(h2d > 0);
  CHECK(kernel > 0);
  CHECK(d2h > 0);
  CHECK(std::fabs(h2d + kernel + d2h - all) < 0.01f * all + 0.01f);
}

TEST_CASE("a host stage releases everything: device memory is back to where it was", "[streamed][memory]") {
  std::size_t before = 0, after = 0, total = 0;
  CUDA_CHECK(cudaDeviceSynchronize());
  course::device_memory(before, total);
  {
    streaming::owned_host_context owned(1 << 22, max_streams);
    for (int i = 0; i < 3; ++i) check_streamed(1 << 22, 1 + i, owned);
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  course::device_memory(after, total);
  CHECK(after == before);
}
