// SPDX-License-Identifier: BSD-3-Clause
// Tests of the device-memory SAXPY stages (01-03). Each test program is built with one stage;
// every check runs on fresh random inputs (the seed is printed on failure; COURSE_SEED replays).
//
// x and y are guarded (harness/sweep.h): each starts `offset` floats into its own allocation
// (offset 1..3: not 16-byte aligned), and the floats before it and the 256 after it are NaN, so a
// stage that reads outside [0, n) and uses what it read writes a NaN. out is poisoned (0xFF
// bytes, also a NaN) with poisoned guards before and after. After each call every guard must be
// intact, the inputs that are not the output unchanged, and out[i] within the bound of
// alpha * x[i] + y[i]. SAXPY may run in place (out == x or out == y), as cublasSaxpy does.
#include "streaming.h"

#include "common/device.h"
#include "common/random.h"
#include "common/random_fill.h"
#include "harness/alloc_tracker.h"
#include "harness/catch.h"
#include "harness/leak_check.h"
#include "harness/sweep.h"
#include "harness/test_guards.h"
#include "harness/test_support.h"

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

using course::test::guard_elements;
using course::test::guarded;

namespace {

const streaming::device_stage &stage_under_test() {
  return course::test::stage_under_test<streaming::device_stage>();
}

// Where the three arrays sit: each `offset` floats into its own allocation, drawn independently;
// in place, out is x's or y's array (and out_offset means nothing).
enum class in_place { no, out_is_x, out_is_y };
struct placement {
  std::size_t x_offset = 0, y_offset = 0, out_offset = 0;
  in_place alias = in_place::no;
  cudaStream_t stream = nullptr;
};

std::string describe(std::size_t n, const streaming::launch_config &cfg, const placement &at) {
  std::string s = "n=" + std::to_string(n) + " threads=" + std::to_string(cfg.threads) +
                  " blocks=" + (cfg.blocks ? std::to_string(cfg.blocks) : std::string("resident"));
  if (stage_under_test().unrolls) s += " unroll=" + std::to_string(cfg.unroll);
  if (at.alias == in_place::out_is_x) s += ", in place (out == x)";
  if (at.alias == in_place::out_is_y) s += ", in place (out == y)";
  if (at.x_offset || at.y_offset || (at.alias == in_place::no && at.out_offset)) {
    s += ", offsets in floats: x " + std::to_string(at.x_offset) + " y " +
         std::to_string(at.y_offset);
    if (at.alias == in_place::no) s += " out " + std::to_string(at.out_offset);
  }
  if (at.stream) s += " (non-blocking stream)";
  return s;
}

bool aligned16(const void *p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// What a call may do besides compute the right answer.
enum class refusal {
  never,           // it must compute
  if_misaligned,   // a stage may refuse a pointer that is not 16-byte aligned (stage 03 does)
  register_limit,  // that, or a block size its kernel's registers do not leave room for on this GPU
                   // (streaming_launch.cuh's refusal, which names the registers per thread)
  any_block_size   // and a block size its kernel cannot launch (std::invalid_argument, with the
                   // reason)
};

// out = alpha*x + y on n fresh random floats placed as `at`, with one call of the stage.
// Bound: one float32 product and one sum (or one FFMA) round twice at most, so
// |out - ref| <= 2 * FLT_EPSILON * (|alpha*x| + |y|).
// A refusal (std::invalid_argument) is accepted where `may_refuse` and the case allow it, and must
// leave every array as it was. Returns whether the stage refused.
bool check_saxpy(std::size_t n, const streaming::launch_config &cfg, const placement &at,
                 refusal may_refuse = refusal::if_misaligned) {
  const auto &stage = stage_under_test();
  const std::uint64_t seed = course::fresh_seed();
  INFO("seed " << seed);
  const float alpha = course::random_float(seed, 99, 0.5f, 4.0f);
  const std::vector<float> hx = course::test::random_floats(n, seed),
                           hy = course::test::random_floats(n, seed + 1);
  const auto x = course::test::guarded_input(hx, at.x_offset),
             y = course::test::guarded_input(hy, at.y_offset);
  auto out = guarded<float>::output(at.alias == in_place::no ? n : 0, at.out_offset);
  float *d_out = at.alias == in_place::out_is_x   ? x.get()
                 : at.alias == in_place::out_is_y ? y.get()
                                                  : out.get();

  const std::string who = "stage " + stage.info.id + ", " + describe(n, cfg, at);
  std::string refused;
  try {
    stage.saxpy(d_out, x.get(), y.get(), n, alpha, cfg, at.stream);
  } catch (const std::invalid_argument &e) {
    refused = e.what();
    if (refused.empty()) refused = "(no message)";
  }
  CUDA_CHECK(cudaDeviceSynchronize());

  const std::string x_damage = x.guard_damage(), y_damage = y.guard_damage(),
                    out_damage = out.guard_damage();
  if (!x_damage.empty()) FAIL(who << ": x's guard changed (" << x_damage << ")");
  if (!y_damage.empty()) FAIL(who << ": y's guard changed (" << y_damage << ")");
  if (!out_damage.empty()) FAIL(who << ": wrote outside out (" << out_damage << ")");

  const std::vector<float> now_x = x.download(), now_y = y.download();
  auto same = [](const std::vector<float> &a, const std::vector<float> &b) {
    return a.size() == b.size() &&
           (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
  };
  if (!refused.empty()) {
    const bool misaligned = !aligned16(d_out) || !aligned16(x.get()) || !aligned16(y.get());
    const bool register_refusal = refused.find("registers per thread") != std::string::npos;
    const bool allowed =
        ((may_refuse == refusal::if_misaligned || may_refuse == refusal::register_limit) &&
         misaligned) ||
        (may_refuse == refusal::register_limit && register_refusal) ||
        may_refuse == refusal::any_block_size;
    if (!allowed) FAIL(who << ": refused a case it must compute: " << refused);
    // A refusal leaves everything as it was.
    if (!same(now_x, hx)) FAIL(who << ": refused (" << refused << "), but x was modified");
    if (!same(now_y, hy)) FAIL(who << ": refused (" << refused << "), but y was modified");
    if (at.alias == in_place::no) {
      const std::size_t written = course::test::first_written(out.download(), 0);
      if (written != n)
        FAIL(who << ": refused (" << refused << "), but wrote out[" << written << "]");
    }
    INFO(who << ": refused: " << refused);
    SUCCEED();
    return true;
  }

  if (at.alias != in_place::out_is_x && !same(now_x, hx)) FAIL(who << ": x was modified");
  if (at.alias != in_place::out_is_y && !same(now_y, hy)) FAIL(who << ": y was modified");
  const std::vector<float> got = at.alias == in_place::out_is_x   ? now_x
                                 : at.alias == in_place::out_is_y ? now_y
                                                                  : out.download();
  auto report = course::test::check_elements(
      n, [&](std::size_t i) { return got[i]; },
      [&](std::size_t i) { return alpha * double(hx[i]) + double(hy[i]); },
      [&](std::size_t i, float g, double want) {
        const double scale = std::fabs(alpha * double(hx[i])) + std::fabs(double(hy[i]));
        return course::test::close(g, want, scale, 2 * FLT_EPSILON);
      });
  if (!report.ok()) FAIL(course::test::describe(stage.info.id, describe(n, cfg, at), n, report));
  SUCCEED();  // one assertion per checked call, so the summary counts them
  return false;
}

bool check_saxpy(std::size_t n, const streaming::launch_config &cfg,
                 refusal may_refuse = refusal::never) {
  return check_saxpy(n, cfg, placement{}, may_refuse);
}

}  // namespace

TEST_CASE("SAXPY matches the float64 reference at awkward sizes and every block size", "[saxpy]") {
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(31), std::size_t(33),
                        std::size_t(1000003), std::size_t((1 << 24) + 7)}) {
    for (int threads : {32, 64, 96, 128, 256, 512, 1000, 1024}) {
      streaming::launch_config cfg;
      cfg.threads = threads;
      // The registers a kernel takes differ between GPU generations: stage 03 at the default
      // unroll (4) takes 38 per thread for sm_90 but 78 for sm_120 and 80 for sm_100, too many for
      // 1000 or 1024 threads per block there. Such a stage refuses, naming its registers.
      check_saxpy(n, cfg, refusal::register_limit);
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
      check_saxpy(n, cfg, refusal::any_block_size);
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

TEST_CASE("SAXPY in place: out == y and out == x", "[saxpy][in-place]") {
  // out[i] depends on x[i] and y[i] only, so computing in place is as right as out of place.
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(31), std::size_t(33),
                        std::size_t(4099), std::size_t(1000003)}) {
    for (int threads : {32, 256, 1000}) {
      for (in_place alias : {in_place::out_is_y, in_place::out_is_x}) {
        streaming::launch_config cfg;
        cfg.threads = threads;
        placement at;
        at.alias = alias;
        check_saxpy(n, cfg, at, refusal::never);
      }
    }
  }
}

TEST_CASE(
    "SAXPY on arrays that are not 16-byte aligned, each on its own: right, or refused with a clear error",
    "[saxpy]") {
  // x alone, y alone, out alone, then by different amounts, then in place: a stage that decides
  // on one pointer's alignment takes its float4 path with another one misaligned.
  struct offsets {
    std::size_t x, y, out;
    in_place alias;
  };
  const offsets cases[] = {
      {1, 0, 0, in_place::no},       {0, 1, 0, in_place::no},       {0, 0, 1, in_place::no},
      {2, 0, 0, in_place::no},       {0, 3, 0, in_place::no},       {0, 0, 2, in_place::no},
      {1, 2, 3, in_place::no},       {3, 3, 3, in_place::no},       {0, 2, 0, in_place::out_is_y},
      {1, 0, 0, in_place::out_is_x}, {1, 0, 0, in_place::out_is_y}, {0, 3, 0, in_place::out_is_x}};
  const std::vector<int> unrolls =
      stage_under_test().unrolls ? std::vector<int>{1, 4} : std::vector<int>{4};
  for (const offsets &o : cases) {
    for (int unroll : unrolls) {
      for (std::size_t n : {std::size_t(33), std::size_t(1000003)}) {
        streaming::launch_config cfg;
        cfg.unroll = unroll;
        placement at;
        at.x_offset = o.x;
        at.y_offset = o.y;
        at.out_offset = o.out;
        at.alias = o.alias;
        check_saxpy(n, cfg, at, refusal::if_misaligned);
      }
    }
  }
}

TEST_CASE("SAXPY past 2^31 elements (64-bit indexing)", "[saxpy][large]") {
  // Generated on the device and checked against random_float(seed, i) on the host: no host copies
  // of the 8.6 GB inputs. The 256 floats after x and y are NaN, out's are poison, as elsewhere.
  const auto &stage = stage_under_test();
  const std::size_t n = (std::size_t(1) << 31) + 17;
  const std::size_t total = n + guard_elements;
  const std::size_t needed = 3 * total * sizeof(float) + (std::size_t(1) << 30);
  if (!course::test::has_free_device_memory(needed, "n=2^31+17")) return;
  const std::uint64_t seed = course::fresh_seed();
  INFO("seed " << seed);
  const float alpha = course::random_float(seed, 99, 0.5f, 4.0f);
  course::device_buffer<float> x(total), y(total), out(total);
  course::fill_random_device(x.get(), n, seed);
  course::fill_random_device(y.get(), n, seed + 1);
  const std::vector<float> nans(guard_elements, course::test::input_guard_value<float>());
  course::test::copy_to_device(x.get() + n, nans);
  course::test::copy_to_device(y.get() + n, nans);
  course::test::poison_device(out.get(), total);
  CUDA_CHECK(cudaDeviceSynchronize());
  streaming::launch_config cfg;
  stage.saxpy(out.get(), x.get(), y.get(), n, alpha, cfg, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());

  const std::vector<float> got = course::test::copy_to_host(out.get(), total);
  auto xi = [&](std::size_t i) { return double(course::random_float(seed, i)); };
  auto yi = [&](std::size_t i) { return double(course::random_float(seed + 1, i)); };
  auto report = course::test::check_elements(
      n, [&](std::size_t i) { return got[i]; },
      [&](std::size_t i) { return alpha * xi(i) + yi(i); },
      [&](std::size_t i, float g, double want) {
        return course::test::close(g, want, std::fabs(alpha * xi(i)) + std::fabs(yi(i)),
                                   2 * FLT_EPSILON);
      });
  const std::string what = "n=2^31+17 threads=" + std::to_string(cfg.threads);
  if (!report.ok()) FAIL(course::test::describe(stage.info.id, what, n, report));
  const std::size_t written = course::test::first_written(got, n);
  if (written != got.size())
    FAIL("stage " << stage.info.id << ", " << what << ": wrote past the end, at element "
                  << written - n << " of the guard zone");
  SUCCEED();
}

TEST_CASE("a device stage allocates nothing it does not free", "[saxpy][memory]") {
  // Counted in this process only (harness/alloc_tracker.h), so other programs on the GPU do not
  // matter.
  const auto &stage = stage_under_test();
  const std::size_t n = 1 << 20;
  course::device_buffer<float> x(n), y(n), out(n);
  course::fill_random_device(x.get(), n, 5);
  course::fill_random_device(y.get(), n, 6);
  course::test::check_no_net_allocations("stage " + stage.info.id, [&] {
    stage.saxpy(out.get(), x.get(), y.get(), n, 2.0f, {}, nullptr);
  });
}

// The seeded random sweep: sizes at the warp, block and group boundaries of the drawn
// configuration (threads, unroll * threads, 4 * unroll * threads for the float4 stage, the whole
// grid's stride for a small grid), primes, 0 and 1, and two above 2^24; the block sizes 32, 64,
// 96, 128, 256, 512, 1000 and 1024 round robin; unroll 1..16 for the stages that unroll; grids of
// resident size or a few blocks; x, y and out each offset by 0..3 floats, drawn independently;
// out == y or out == x in a fifth of the cases each; a quarter of the calls on a non-blocking
// stream. A misaligned case may be refused (stage 03 refuses them) and a block size above 256 too
// (a kernel with many registers per thread cannot launch large blocks: stage 03 unrolled 10 times
// or more cannot run 1024 threads); a refusal must leave every array as it was. A failure names
// the case; the test main prints the replay line.
TEST_CASE("seeded random sweep over sizes, block sizes, unrolls, alignments and in place",
          "[sweep]") {
  const auto &stage = stage_under_test();
  course::test::sweep_rng rng(course::fresh_seed());
  INFO("sweep seed " << rng.seed());
  const int threads_list[] = {32, 64, 96, 128, 256, 512, 1000, 1024};
  const std::size_t max_n = 3000000;
  course::stream side;
  const int cases = 80;
  int refused = 0;
  for (int c = 0; c < cases; ++c) {
    streaming::launch_config cfg;
    cfg.threads = threads_list[c % 8];
    if (stage.unrolls) cfg.unroll = int(rng.between(1, 16));
    const int blocks = rng.pick({0, 0, 0, 1, 7, int(rng.between(2, 64))});
    const std::size_t t = std::size_t(cfg.threads), u = std::size_t(cfg.unroll);
    std::vector<std::size_t> boundaries = {32, 128, 4 * t, u * t, 4 * u * t};
    if (blocks) boundaries.push_back(4 * u * t * std::size_t(blocks));
    std::size_t n = rng.awkward_size(boundaries, max_n);
    if (c == 13 || c == 58) n = (std::size_t(1) << 24) + rng.between(1, 1 << 20);
    // A grid small enough to leave each thread more than 2^16 elements would only be slow.
    if (std::size_t(blocks) * t * (std::size_t(1) << 16) >= n) cfg.blocks = blocks;
    placement at;
    at.x_offset = rng.below(4);
    at.y_offset = rng.below(4);
    at.out_offset = rng.below(4);
    const std::size_t mode = rng.below(10);
    at.alias = mode < 2 ? in_place::out_is_y : mode < 4 ? in_place::out_is_x : in_place::no;
    at.stream = rng.chance(0.25) ? cudaStream_t(side) : nullptr;
    INFO("case " << c << ": " << describe(n, cfg, at));
    if (check_saxpy(n, cfg, at,
                    cfg.threads > 256 ? refusal::any_block_size : refusal::if_misaligned))
      ++refused;
  }
  INFO(refused << " of " << cases << " cases refused");
  SUCCEED();
}
