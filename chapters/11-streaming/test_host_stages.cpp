// SPDX-License-Identifier: BSD-3-Clause
// Tests of the host-memory SAXPY stages (04-07): the arrays live in host memory the stage itself
// allocates (pageable, pinned or mapped: the test checks that it is the kind promised); results
// are checked element by element, the output first (a stage that returns before its work is done
// is caught while the copy back is still under way).
//
// Each of h_x, h_y and h_out starts `offset` floats (0..3, drawn independently in the sweep) into
// its own host allocation. The floats before x and y and the 256 after them are NaN, so a stage
// that copies or reads outside [0, n) and uses it writes a NaN; out is poisoned (0xFF bytes) with
// poisoned guards before and after. After each call every guard must be intact, x and y unchanged,
// and out[i] within the bound of alpha * x[i] + y[i].
#include "host_context.h"
#include "streaming.h"

#include "common/device.h"
#include "common/random.h"
#include "common/random_fill.h"
#include "harness/alloc_tracker.h"
#include "harness/catch.h"
#include "harness/leak_check.h"
#include "harness/sweep.h"
#include "harness/test_support.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

using course::test::guard_elements;

namespace {

constexpr int max_streams = 8;
constexpr std::size_t max_offset = 3;

const streaming::host_stage &stage_under_test() {
  return course::test::stage_under_test<streaming::host_stage>();
}

// A host array from the stage's own allocator with room for `capacity` floats at any offset 0..3
// and a guard zone: place() puts an array of n floats `offset` floats in and fills everything
// before it and the guard_elements after it with the guard (one allocation, reused by every
// check, since pinning memory is slow).
class host_array {
 public:
  explicit host_array(std::size_t capacity)
      : buf_(stage_under_test(), max_offset + capacity + guard_elements) {}
  float *place(std::size_t n, std::size_t offset, float guard) {
    if (offset > max_offset || max_offset + n + guard_elements > buf_.size())
      throw std::logic_error("host_array::place: no room for the array");
    n_ = n;
    offset_ = offset;
    guard_ = guard;
    for (std::size_t i = 0; i < offset; ++i) buf_[i] = guard;
    for (std::size_t i = offset + n; i < offset + n + guard_elements; ++i) buf_[i] = guard;
    return get();
  }
  float *get() const { return buf_.get() + offset_; }
  // "" if every guard still holds the guard's bytes, else where the first changed one is.
  std::string guard_damage() const {
    return course::test::guard_zone_damage(buf_.get(), offset_, n_, guard_elements,
                                           [&](std::size_t) { return guard_; });
  }

 private:
  streaming::stage_host_buffer buf_;
  std::size_t n_ = 0, offset_ = 0;
  float guard_ = 0;
};

// The three arrays of a check, and the context the stage works in.
struct host_arrays {
  host_array x, y, out;
  streaming::owned_host_context owned;
  explicit host_arrays(std::size_t capacity)
      : x(capacity),
        y(capacity),
        out(capacity),
        owned(std::max<std::size_t>(capacity, 1), max_streams) {}
};

struct placement {
  std::size_t x_offset = 0, y_offset = 0, out_offset = 0;
};

float poison_float() {
  float f;
  std::memset(&f, course::test::poison_byte, sizeof f);
  return f;
}

// Bound as for the device stages: |out - ref| <= 2 * FLT_EPSILON * (|alpha*x| + |y|).
void check_streamed(std::size_t n, int streams, host_arrays &a, const placement &at = {}) {
  const auto &stage = stage_under_test();
  const std::uint64_t seed = course::fresh_seed();
  INFO("seed " << seed);
  const float alpha = course::random_float(seed, 99, 0.5f, 4.0f);
  const float nan = course::test::input_guard_value<float>();
  float *x = a.x.place(n, at.x_offset, nan);
  float *y = a.y.place(n, at.y_offset, nan);
  float *out = a.out.place(n, at.out_offset, poison_float());
  course::fill_random_host(x, n, seed);
  course::fill_random_host(y, n, seed + 1);
  course::test::poison_host(out, n);
  auto &ctx = a.owned.get();
  ctx.n_streams = streams;
  stage.saxpy(out, x, y, n, alpha, ctx);
  // "On return h_out holds the result": nothing the stage enqueued may still be running.
  bool idle = cudaStreamQuery(0) == cudaSuccess;
  for (int s = 0; s < ctx.max_streams; ++s)
    idle = idle && cudaStreamQuery(ctx.streams[s]) == cudaSuccess;

  std::string what = "n=" + std::to_string(n) + " streams=" + std::to_string(streams) +
                     " memory=" + course::to_string(stage.memory);
  if (at.x_offset || at.y_offset || at.out_offset)
    what += ", offsets in floats: x " + std::to_string(at.x_offset) + " y " +
            std::to_string(at.y_offset) + " out " + std::to_string(at.out_offset);
  const std::string who = "stage " + stage.info.id + ", " + what;
  if (!idle)
    FAIL(
        who
        << ": returned while its work was still running in a stream (no wait, or a wait on another stream)");
  auto xi = [&](std::size_t i) { return course::random_float(seed, i); };
  auto yi = [&](std::size_t i) { return course::random_float(seed + 1, i); };
  // The output first, straight after the call: a stage that returned before its copy back (or its
  // kernel on mapped memory) ended shows poison here.
  auto report = course::test::check_elements(
      n, [&](std::size_t i) { return out[i]; },
      [&](std::size_t i) { return alpha * double(xi(i)) + double(yi(i)); },
      [&](std::size_t i, float g, double want) {
        return course::test::close(
            g, want, std::fabs(alpha * double(xi(i))) + std::fabs(double(yi(i))), 2 * FLT_EPSILON);
      });
  if (!report.ok()) FAIL(course::test::describe(stage.info.id, what, n, report));
  const std::string x_damage = a.x.guard_damage(), y_damage = a.y.guard_damage(),
                    out_damage = a.out.guard_damage();
  if (!x_damage.empty()) FAIL(who << ": x's guard changed (" << x_damage << ")");
  if (!y_damage.empty()) FAIL(who << ": y's guard changed (" << y_damage << ")");
  if (!out_damage.empty()) FAIL(who << ": wrote outside out (" << out_damage << ")");
  const auto unchanged = [&](const float *h, auto want) {
    return course::test::check_elements(
        n, [&](std::size_t i) { return h[i]; }, want,
        [](std::size_t, float g, double w) { return double(g) == w; });
  };
  const auto x_report = unchanged(x, xi), y_report = unchanged(y, yi);
  if (!x_report.ok())
    FAIL(course::test::describe(stage.info.id, what + ": x was modified", n, x_report));
  if (!y_report.ok())
    FAIL(course::test::describe(stage.info.id, what + ": y was modified", n, y_report));
  SUCCEED();  // one assertion per checked call, so the summary counts them
}

}  // namespace

TEST_CASE("streamed SAXPY matches the float64 reference", "[streamed]") {
  const std::size_t large = (std::size_t(1) << 25) + 3;
  host_arrays a(large);
  for (std::size_t n :
       {std::size_t(0), std::size_t(1), std::size_t(31), std::size_t(1000003), large})
    check_streamed(n, 1, a);
}

TEST_CASE("streamed SAXPY with 1..8 streams, n not divisible by the stream count",
          "[streamed][streams]") {
  host_arrays a(1000003);
  for (int streams = 1; streams <= max_streams; ++streams)
    for (std::size_t n : {std::size_t(1), std::size_t(5), std::size_t(1000), std::size_t(1000003)})
      check_streamed(n, streams, a);
}

TEST_CASE("streamed SAXPY on host arrays that are not 16-byte aligned, each on its own",
          "[streamed]") {
  host_arrays a(100003);
  const placement cases[] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 2, 3}, {3, 3, 3}};
  for (const placement &at : cases)
    for (int streams : {1, 3}) check_streamed(100003, streams, a, at);
}

// What the stage's allocator returns must be the memory it promises: cudaPointerGetAttributes
// knows page-locked memory (cudaMemoryTypeHost) from memory the driver never saw
// (cudaMemoryTypeUnregistered), and whether a mapped allocation has a device address. Results
// alone cannot show it: a pageable array copied with cudaMemcpyAsync still gives the right answer,
// synchronously and slowly.
TEST_CASE("the stage's host arrays are the kind of memory it promises", "[streamed][memory]") {
  const auto &stage = stage_under_test();
  streaming::stage_host_buffer buf(stage, 1000);
  REQUIRE(buf.get() != nullptr);
  cudaPointerAttributes attr{};
  CUDA_CHECK(cudaPointerGetAttributes(&attr, buf.get() + 3));
  INFO("stage " << stage.info.id << " promises " << course::to_string(stage.memory)
                << " memory; cudaPointerGetAttributes: type " << int(attr.type)
                << ", device pointer " << attr.devicePointer);
  switch (stage.memory) {
    case course::host_memory::pageable:
      CHECK(attr.type != cudaMemoryTypeHost);
      break;  // not page-locked
    case course::host_memory::pinned: CHECK(attr.type == cudaMemoryTypeHost); break;
    case course::host_memory::mapped:
      CHECK(attr.type == cudaMemoryTypeHost);
      CHECK(attr.devicePointer != nullptr);
      break;
  }
  buf[0] = 1.0f;  // host-accessible, whatever the kind
  buf[999] = 2.0f;
  CHECK(buf[0] + buf[999] == 3.0f);
}

TEST_CASE("phase timings, where a stage records them, are consistent", "[streamed]") {
  const std::size_t n = 1 << 22;
  host_arrays a(n);
  check_streamed(n, 1, a);
  auto &ctx = a.owned.get();
  if (!ctx.phases) return;
  float h2d = course::elapsed_ms(ctx.ev_start, ctx.ev_h2d),
        kernel = course::elapsed_ms(ctx.ev_h2d, ctx.ev_kernel),
        d2h = course::elapsed_ms(ctx.ev_kernel, ctx.ev_d2h),
        all = course::elapsed_ms(ctx.ev_start, ctx.ev_d2h);
  CHECK(h2d > 0);
  CHECK(kernel > 0);
  CHECK(d2h > 0);
  CHECK(std::fabs(h2d + kernel + d2h - all) < 0.01f * all + 0.01f);
}

TEST_CASE("a host stage allocates nothing it does not free", "[streamed][memory]") {
  // Device memory and page-locked host memory, counted in this process only
  // (harness/alloc_tracker.h), so other programs on the GPU do not matter. First the stage's own
  // calls (the context and the arrays stay allocated), then everything once released.
  REQUIRE(course::test::allocation_tracking_active());
  const std::size_t n = 1 << 22;
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto at_start = course::test::live_allocations();
  {
    host_arrays a(n);
    int call = 0;  // 1, 4, 7, then 1 stream again
    course::test::check_no_net_allocations("stage " + stage_under_test().info.id,
                                           [&] { check_streamed(n, 1 + 3 * (call++ % 3), a); });
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto at_end = course::test::live_allocations();
  INFO("stage " << stage_under_test().info.id << ", context and arrays released: at start "
                << course::test::describe(at_start) << "; at end "
                << course::test::describe(at_end));
  CHECK(at_end == at_start);
}

// The seeded random sweep, kept small (these stages move their data over PCIe): sizes at the
// warp, chunk (64 floats) and block boundaries, primes, 0 and 1, and one above 2^24; 1..8 streams;
// x, y and out each offset by 0..3 floats, drawn independently. A failure names the case; the
// test main prints the replay line.
TEST_CASE("seeded random sweep over sizes, stream counts and alignments", "[sweep]") {
  course::test::sweep_rng rng(course::fresh_seed());
  INFO("sweep seed " << rng.seed());
  struct draw {
    std::size_t n;
    int streams;
    placement at;
  };
  const int cases = 40;
  std::vector<draw> draws(cases);
  std::size_t capacity = 0;
  for (int c = 0; c < cases; ++c) {
    draw &d = draws[std::size_t(c)];
    d.streams = int(rng.between(1, max_streams));
    const std::size_t k = std::size_t(d.streams);
    d.n = rng.awkward_size({32, 64, 256, 1024, 64 * k, 4096 * k}, std::size_t(1) << 21);
    if (c == 23) d.n = (std::size_t(1) << 24) + rng.between(1, 1 << 16);
    d.at.x_offset = rng.below(4);
    d.at.y_offset = rng.below(4);
    d.at.out_offset = rng.below(4);
    capacity = std::max(capacity, d.n);
  }
  host_arrays a(capacity);  // allocated once: pinning memory is slow
  for (int c = 0; c < cases; ++c) {
    const draw &d = draws[std::size_t(c)];
    INFO("case " << c);
    check_streamed(d.n, d.streams, a, d.at);
  }
}
