// SPDX-License-Identifier: BSD-3-Clause
// Tests of every GPU force stage (02-08 and the multi-GPU 10). Each test program is built with one
// stage. The bodies are random (positions in [-1, 1]^3, masses in [0.5, 1.5]; the seed is printed
// on failure, COURSE_SEED replays). Every force is compared with the float64 host reference
// (host_nbody.h) by |f - ref| / sum_j |f_ij| <= nbody::error_bound(n) = 1e-5 + 2e-7 sqrt(n); the w
// component must be 0. Outputs are poisoned first (NaN bytes) and followed by a guard zone that
// must stay poisoned. The body array (device or pinned host memory) is followed by 1024 guard
// bodies of mass 10^6 at (0.5, -0.25, 0.75): a stage that reads past body n - 1 adds their pull
// and misses the bound by orders of magnitude, in the plain tests, not only under memcheck.
// Sizes: 1, 31, 1000, 4097 and (the [large] cases, which the sanitizer runs leave out) 65539,
// none a multiple of a block or a tile; the seeded sweep ([sweep]) draws sizes up to 6000 at the
// warp, block and tile boundaries, every block size, every unroll, blocking and split, and places
// the body and force arrays 0..3 float4s into their allocations, each on its own.
#include "host_nbody.h"
#include "nbody.h"

#include "common/memory.h"
#include "common/random_fill.h"
#include "harness/alloc_tracker.h"
#include "harness/catch.h"
#include "harness/leak_check.h"
#include "harness/sweep.h"
#include "harness/test_support.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

using course::test::guard_elements;

namespace {

constexpr float softening = 0.01f;
constexpr float softening2 = softening * softening;
const std::vector<std::size_t> sizes = {1, 31, 1000, 4097};
constexpr std::size_t large = 65539;

// The input's guard: bodies this heavy, read by mistake, move every force far past the bound
// (10^6 at a distance of at most a few units, against sum_j |f_ij| of a few times n). As many as
// the widest tile a stage reads past n (stage 03's blocks of 1024 threads: 1023).
const float4 heavy_body = {0.5f, -0.25f, 0.75f, 1e6f};
constexpr std::size_t body_guard = 1024;

const nbody::stage &stage_under_test() { return course::test::stage_under_test<nbody::stage>(); }

struct problem {
  std::uint64_t seed;
  std::vector<float4> body;
  std::vector<nbody::force64> want;
  float soft2 = softening2;
};

// One random problem per size per test program run (the float64 reference of 65539 bodies takes
// a few seconds), the seed fresh each run.
const problem &problem_of(std::size_t n) {
  static std::map<std::size_t, problem> cache;
  auto it = cache.find(n);
  if (it != cache.end()) return it->second;
  problem p;
  p.seed = course::fresh_seed();
  p.body = nbody::random_bodies(n, p.seed);
  p.want = nbody::host_forces_f64(p.body.data(), n, softening2);
  return cache.emplace(n, std::move(p)).first->second;
}

// Where the arrays of a call sit: each starts `offset` whole float4s (16 bytes each) into its
// allocation, the bodies and the forces independently; device stages may run on a stream.
struct placement {
  std::size_t body_offset = 0, force_offset = 0;
  cudaStream_t stream = nullptr;
};

std::string describe(std::size_t n, const nbody::config &cfg, const placement &at = placement{}) {
  std::string s = "n=" + std::to_string(n) + " threads=" + std::to_string(cfg.threads) +
                  " unroll=" + std::to_string(cfg.unroll) +
                  " rows_per_thread=" + std::to_string(cfg.rows_per_thread) +
                  " parts=" + std::to_string(cfg.parts) + " gpus=" + std::to_string(cfg.gpus);
  if (at.body_offset) s += " body offset " + std::to_string(at.body_offset);
  if (at.force_offset) s += " force offset " + std::to_string(at.force_offset);
  if (at.stream) s += " (non-blocking stream)";
  return s;
}

bool same_bytes(const std::vector<float4> &a, const float4 *b) {
  return a.empty() || std::memcmp(a.data(), b, a.size() * sizeof(float4)) == 0;
}

// Stage 10's arrays: portable pinned host memory with the guards of guarded<T> (heavy bodies
// around the input, poison around the output), checked the same way.
struct pinned_guarded {
  pinned_guarded(std::size_t n, std::size_t offset, std::size_t guard)
      : buf(offset + n + guard, course::host_memory::pinned), n(n), offset(offset) {}
  float4 *get() const { return buf.get() + offset; }
  // "" or where the first element outside [offset, offset + n) differs from `before`.
  std::string damage() const {
    return course::test::guard_zone_damage(buf.get(), offset, n, buf.size() - offset - n,
                                           [&](std::size_t i) { return before[i]; });
  }
  course::host_buffer<float4> buf;
  std::size_t n, offset;
  std::vector<float4> before;  // what the whole buffer held before the call
};

// The stage's forces of `body`, through the entry point it has (device or pinned host memory),
// with the arrays placed as `at`. The bodies are followed (and, at an offset, preceded) by heavy
// guard bodies, the output poisoned with poisoned guards. Checks that the guards of both and the
// bodies are unchanged; returns the forces.
std::vector<float4> run_stage(const std::vector<float4> &body, const nbody::config &cfg,
                              float soft2 = softening2, const placement &at = placement{}) {
  const auto &stage = stage_under_test();
  const std::size_t n = body.size();
  const std::string who = "stage " + stage.info.id + ", " + describe(n, cfg, at);
  if (stage.forces_host) {
    pinned_guarded h_body(n, at.body_offset, body_guard),
        h_force(n, at.force_offset, guard_elements);
    for (std::size_t i = 0; i < h_body.buf.size(); ++i) h_body.buf[i] = heavy_body;
    if (n) std::memcpy(static_cast<void *>(h_body.get()), body.data(), n * sizeof(float4));
    h_body.before.assign(h_body.buf.get(), h_body.buf.get() + h_body.buf.size());
    course::test::poison_host(h_force.buf.get(), h_force.buf.size());
    h_force.before.assign(h_force.buf.get(), h_force.buf.get() + h_force.buf.size());
    stage.forces_host(h_force.get(), h_body.get(), n, soft2, cfg);
    const std::string in_damage = h_body.damage(), out_damage = h_force.damage();
    if (!in_damage.empty()) FAIL(who << ": the bodies' guard changed (" << in_damage << ")");
    if (!out_damage.empty()) FAIL(who << ": wrote outside the forces (" << out_damage << ")");
    if (!same_bytes(body, h_body.get())) FAIL(who << ": the bodies were modified");
    return std::vector<float4>(h_force.get(), h_force.get() + n);
  }
  auto d_body = course::test::guarded<float4>::input(n, at.body_offset, heavy_body, body_guard);
  d_body.upload(body);
  auto d_force = course::test::guarded<float4>::output(n, at.force_offset);
  stage.forces(d_force.get(), d_body.get(), n, soft2, cfg, at.stream);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::string in_damage = d_body.guard_damage(), out_damage = d_force.guard_damage();
  if (!in_damage.empty()) FAIL(who << ": the bodies' guard changed (" << in_damage << ")");
  if (!out_damage.empty()) FAIL(who << ": wrote outside the forces (" << out_damage << ")");
  if (!same_bytes(body, d_body.download().data())) FAIL(who << ": the bodies were modified");
  return d_force.download();
}

void check_against_reference(const std::string &who, const std::vector<float4> &got,
                             const problem &p) {
  const std::size_t n = p.body.size();
  const double bound = nbody::error_bound(n);
  INFO("seed " << p.seed << "; bound " << bound);
  const auto r = course::test::check_elements(
      n, [&](std::size_t i) { return nbody::relative_error(got[i], p.want[i]); },
      [](std::size_t) { return 0.0; },
      [&](std::size_t i, double err, double) {
        return std::isfinite(err) && err <= bound && got[i].w == 0.f;
      });
  if (!r.ok()) {
    const std::size_t i = r.first;
    FAIL("stage " << stage_under_test().info.id << ", " << who << ": " << r.wrong << " of " << n
                  << " forces wrong; first [" << i << "]: relative error " << r.actual << " > "
                  << bound << " (got " << got[i].x << ", " << got[i].y << ", " << got[i].z << ", w "
                  << got[i].w << "; want " << p.want[i].x << ", " << p.want[i].y << ", "
                  << p.want[i].z << ")");
  }
  SUCCEED();
}

void check(std::size_t n, const nbody::config &cfg) {
  const problem &p = problem_of(n);
  check_against_reference(describe(n, cfg), run_stage(p.body, cfg, p.soft2), p);
}

}  // namespace

TEST_CASE("forces match the float64 reference at awkward sizes", "[nbody]") {
  for (std::size_t n : sizes) check(n, nbody::config{});
}

TEST_CASE("forces match the float64 reference at a large N", "[nbody][large]") {
  check(large, nbody::config{});
  if (stage_under_test().blocked) {
    for (int rows : {1, 2, 4, 8}) {
      nbody::config cfg;
      cfg.rows_per_thread = rows;
      check(large, cfg);
    }
  }
}

TEST_CASE("every block size the stages take", "[nbody]") {
  for (int threads : {32, 64, 96, 128, 256, 1024}) {
    nbody::config cfg;
    cfg.threads = threads;
    for (std::size_t n : {std::size_t(31), std::size_t(1000), std::size_t(4097)}) check(n, cfg);
  }
}

TEST_CASE("every unroll factor of the sweeps (tables 14.1 and 14.2)", "[nbody]") {
  if (!stage_under_test().unroll_sweep) return;
  for (int unroll : {1, 2, 4, 8, 16, 32}) {
    for (int threads : {64, 256}) {
      nbody::config cfg;
      cfg.unroll = unroll;
      cfg.threads = threads;
      for (std::size_t n : {std::size_t(31), std::size_t(4097)}) check(n, cfg);
    }
  }
}

TEST_CASE("every register blocking of stages 07 and 08", "[nbody]") {
  if (!stage_under_test().blocked) return;
  for (int rows : {1, 2, 4, 8}) {
    for (int threads : {128, 256}) {
      for (int unroll : {8, 16, 32}) {
        nbody::config cfg;
        cfg.rows_per_thread = rows;
        cfg.threads = threads;
        cfg.unroll = unroll;
        for (std::size_t n : {std::size_t(1), std::size_t(1000), std::size_t(4097)}) check(n, cfg);
      }
    }
  }
}

TEST_CASE("a block's columns span several tiles", "[nbody]") {
  // At the sizes above the column split (about 128 blocks per SM) leaves every block of stages 07
  // and 08 one tile of columns, so nothing shows a tile overwritten while slower warps still read
  // it. At n = 20000, 128-row blocks get two or more tiles each on a GPU of up to about 170 SMs:
  // a missing barrier between tiles races there, and racecheck reports it.
  if (!stage_under_test().blocked) return;
  nbody::config cfg;
  cfg.rows_per_thread = 1;
  cfg.threads = 128;
  check(20000, cfg);
}

TEST_CASE("no body pulls on itself, wherever it sits in its block's rows", "[nbody][self]") {
  // Stage 08's self term is not exactly 0 (mass-scaled coordinates): a body of mass m pulls on
  // itself by about 2^-24 |x| m / e^3 unless the kernel masks j == i in every tile that holds
  // its block's rows. Heavy bodies (10^6) at indices spread over the R * B rows of a block, for
  // every rows-per-thread and block size: a body left unmasked adds a pull of about 10^4 to a
  // force whose terms sum to some 10^7 (the other heavy bodies), far past the bound. Every stage
  // runs it (one configuration where the stage has no blocking).
  const std::size_t heavy_at[] = {0,   1,   37,  127, 128, 200, 255, 256, 300,
                                  383, 384, 511, 512, 640, 700, 895, 999};
  for (std::size_t n : {std::size_t(1000), std::size_t(2100)}) {
    problem p;
    p.seed = course::fresh_seed();
    p.body = nbody::random_bodies(n, p.seed);
    for (std::size_t i : heavy_at) p.body[i].w = 1e6f;
    for (std::size_t k = 1000; k < n; k += 97) p.body[k].w = 1e6f;
    p.want = nbody::host_forces_f64(p.body.data(), n, softening2);
    std::vector<nbody::config> configs(1);
    if (stage_under_test().blocked) {
      configs.clear();
      for (int rows : {1, 2, 4, 8}) {
        for (int threads : {128, 256}) {
          nbody::config cfg;
          cfg.rows_per_thread = rows;
          cfg.threads = threads;
          configs.push_back(cfg);
        }
      }
    }
    for (const auto &cfg : configs)
      check_against_reference(describe(n, cfg) + ", heavy bodies across the block",
                              run_stage(p.body, cfg), p);
  }
}

TEST_CASE("bodies of zero mass pull on no one and are pulled like any other", "[nbody]") {
  // Every third body massless (stage 08 stores those as a = 0, e^2 / m = 1 instead of dividing
  // by 0), and a tiny and a huge mass beside them.
  for (std::size_t n : {std::size_t(31), std::size_t(4097)}) {
    problem p;
    p.seed = course::fresh_seed();
    p.body = nbody::random_bodies(n, p.seed);
    for (std::size_t i = 0; i < n; i += 3) p.body[i].w = 0.f;
    p.body[1].w = 1e-30f;
    p.body[n - 1].w = 1e6f;
    p.want = nbody::host_forces_f64(p.body.data(), n, softening2);
    check_against_reference("n=" + std::to_string(n) + ", every third body massless",
                            run_stage(p.body, nbody::config{}), p);
  }
}

TEST_CASE("the symmetric stage equals brute force", "[nbody][symmetric]") {
  // Every stage, and stage 06 (half the pairs, atomics) in particular: against the brute-force
  // float32 host code (listing 14.2) as well as the float64 reference, both within the bound.
  for (std::size_t n : {std::size_t(33), std::size_t(1000), std::size_t(4097)}) {
    const problem &p = problem_of(n);
    std::vector<float4> brute(n);
    nbody::host_forces_aos(brute.data(), p.body.data(), n, softening2);
    const auto got = run_stage(p.body, nbody::config{});
    const double bound = nbody::error_bound(n);
    for (std::size_t i = 0; i < n; ++i) {
      const double err = nbody::relative_difference(got[i], brute[i], p.want[i]);
      if (!(err <= bound))
        FAIL("stage " << stage_under_test().info.id << ", n=" << n << ": force [" << i
                      << "] differs from brute force by " << err << " > " << bound);
    }
  }
  SUCCEED();
}

namespace {
void check_splits(const std::vector<std::size_t> &ns) {
  int visible = 0;
  CUDA_CHECK(cudaGetDeviceCount(&visible));
  for (std::size_t n : ns) {
    const problem &p = problem_of(n);
    nbody::config one;
    one.parts = 1;
    one.gpus = 1;
    const auto single = run_stage(p.body, one);
    check_against_reference(describe(n, one), single, p);
    // 2, 3 and 5 parts dealt round-robin to the visible GPUs (on one GPU: all on it, one after the
    // other), and one part per GPU: the same code computes each row, so the forces are equal bit
    // for bit.
    for (int parts : {0, 2, 3, 5}) {
      nbody::config cfg;
      cfg.parts = parts;
      const auto got = run_stage(p.body, cfg);
      for (std::size_t i = 0; i < n; ++i) {
        if (std::memcmp(&got[i], &single[i], sizeof(float4)) != 0)
          FAIL("stage 10, " << describe(n, cfg) << " on " << visible << " GPU(s): force [" << i
                            << "] = (" << got[i].x << ", " << got[i].y << ", " << got[i].z << ", "
                            << got[i].w << ") differs from the single-GPU run (" << single[i].x
                            << ", " << single[i].y << ", " << single[i].z << ", " << single[i].w
                            << ")");
      }
    }
  }
  SUCCEED();
}
}  // namespace

TEST_CASE("the multi-GPU stage equals its single-GPU run for any split", "[nbody][multi]") {
  if (stage_under_test().forces_host) check_splits(sizes);
}

TEST_CASE("the multi-GPU stage equals its single-GPU run for any split, large N",
          "[nbody][multi][large]") {
  if (stage_under_test().forces_host) check_splits({large});
}

TEST_CASE("momentum is conserved over 100 leapfrog steps", "[nbody][momentum]") {
  // Every pair pulls equal and opposite, so sum m_i a_i = 0 but for rounding: after 100 steps of
  // dt = 1e-3 from rest, |P| must stay below 1e-4 of sum m_i |v_i| (the float32 sums round each
  // force by about 1e-6 of its scale; 100 steps of that are well inside 1e-4).
  const std::size_t n = 1000;
  const std::uint64_t seed = course::fresh_seed();
  INFO("seed " << seed);
  std::vector<float4> body = nbody::random_bodies(n, seed), vel(n, float4{0.f, 0.f, 0.f, 0.f}),
                      accel;
  auto forces = [&](std::vector<float4> &a, const std::vector<float4> &b) {
    a = run_stage(b, nbody::config{}, 0.05f * 0.05f);
  };
  forces(accel, body);
  for (int step = 0; step < 100; ++step) nbody::leapfrog_step(body, vel, accel, 1e-3f, forces);
  const nbody::momentum p = nbody::total_momentum(body, vel);
  const double drift = std::sqrt(p.x * p.x + p.y * p.y + p.z * p.z);
  INFO("|P| = " << drift << ", sum m|v| = " << p.scale);
  CHECK(p.scale > 0);
  CHECK(drift <= 1e-4 * p.scale);
}

TEST_CASE("configurations the stages do not handle are refused, not miscomputed", "[nbody]") {
  const auto &stage = stage_under_test();
  std::vector<float4> body = nbody::random_bodies(64, 1);
  for (int threads : {0, 16, 33, 100, 2048}) {
    nbody::config cfg;
    cfg.threads = threads;
    INFO("threads " << threads);
    CHECK_THROWS(run_stage(body, cfg));
  }
  if (stage.unroll_sweep) {
    nbody::config cfg;
    cfg.unroll = 3;
    CHECK_THROWS(run_stage(body, cfg));
  }
  if (stage.blocked) {
    nbody::config cfg;
    cfg.rows_per_thread = 3;
    CHECK_THROWS(run_stage(body, cfg));
  }
}

TEST_CASE("a stage allocates nothing it does not free", "[nbody][memory]") {
  // The device stages keep no workspace: after a first call, further calls leave this process's
  // allocations as they were. Stage 10 allocates its device arrays on every call (and on every
  // GPU): each call must free all of it. Counted in this process only (harness/alloc_tracker.h).
  const auto &stage = stage_under_test();
  const std::size_t n = 4097;
  const std::vector<float4> body = nbody::random_bodies(n, 5);
  course::device_buffer<float4> d_body, d_force;
  course::host_buffer<float4> h_body, h_force;
  if (stage.forces_host) {
    h_body = course::host_buffer<float4>(n, course::host_memory::pinned);
    h_force = course::host_buffer<float4>(n, course::host_memory::pinned);
    std::memcpy(static_cast<void *>(h_body.get()), body.data(), n * sizeof(float4));
  } else {
    d_body = course::device_buffer<float4>(n);
    d_force = course::device_buffer<float4>(n);
    course::test::copy_to_device(d_body.get(), body);
  }
  auto call = [&] {
    for (int parts : {0, 3}) {
      nbody::config cfg;
      cfg.parts = parts;
      if (stage.forces_host) stage.forces_host(h_force.get(), h_body.get(), n, softening2, cfg);
      else stage.forces(d_force.get(), d_body.get(), n, softening2, cfg, nullptr);
    }
  };
  course::test::check_no_net_allocations("stage " + stage.info.id, call);
}

// The seeded random sweep: sizes up to 6000 at the warp, block and tile boundaries (32 .. 1024),
// primes, 0 and 1; every block size 32..1024 in turn; every unroll factor (02, 03), every rows
// per thread, block size and unroll of stages 07 and 08, every part count 0..5 of stage
// 10 (and its forces equal to its 1-part run bit for bit); the body and force arrays 0..3 float4s
// into their allocations, each on its own, behind and before heavy guard bodies; some bodies
// massless; three softenings; some calls on a non-blocking stream. Each case draws a fresh problem
// and its float64 reference (O(n^2) on the host: the sizes stay below 6000).
TEST_CASE("seeded random sweep over sizes, block sizes, configurations and alignments", "[sweep]") {
  const auto &stage = stage_under_test();
  course::test::sweep_rng rng(course::fresh_seed());
  INFO("sweep seed " << rng.seed());
  const std::vector<std::size_t> boundaries = {32, 64, 128, 256, 512, 1024};
  const std::size_t max_n = 6000;
  const int unrolls[] = {1, 2, 4, 8, 16, 32};
  const int rows[] = {1, 2, 4, 8};
  course::stream side;
  const int cases = 64;
  for (int c = 0; c < cases; ++c) {
    nbody::config cfg;
    cfg.threads = 32 * (1 + c % 32);  // every block size twice over the sweep
    if (stage.unroll_sweep) cfg.unroll = unrolls[c % 6];
    if (stage.blocked) {
      // Stages 07 and 08 are compiled for 128 and 256 threads (others run its default, 128), unroll
      // 8, 16 and 32 (others: 8), and 1, 2, 4 or 8 rows per thread (0: its default). Every R x B in
      // turn, and every fifth case another block size (run as 128).
      if (c % 5 != 4) cfg.threads = (c / 4) % 2 ? 256 : 128;
      cfg.unroll = rng.pick({8, 16, 32, 4});
      cfg.rows_per_thread = c % 9 == 8 ? 0 : rows[c % 4];
    }
    if (stage.forces_host) {
      cfg.parts = c % 6;
      cfg.gpus = rng.pick({0, 0, 1});
    }
    placement at;
    at.body_offset = rng.below(4);
    at.force_offset = rng.below(4);
    if (stage.forces && rng.chance(0.25)) at.stream = side;
    problem p;
    p.seed = rng.bits();
    const std::size_t n = rng.awkward_size(boundaries, max_n);
    p.body = nbody::random_bodies(n, p.seed);
    std::string extra;
    if (rng.chance(0.25)) {  // massless bodies among the others (the stage 08 a = 0 path), or all
      const bool all = rng.chance(0.15);
      for (std::size_t i = 0; i < n; ++i)
        if (all || course::random_bits(p.seed + 1, i) % 3 == 0) p.body[i].w = 0.f;
      extra = all ? ", every body massless" : ", a third of the bodies massless";
    }
    // Softenings of 0.01 and above (below it, the mass-scaled form's rounding of a x_j is no
    // longer small against the distance of the closest pairs: nbody.h, stage 08).
    const float soft = rng.pick({0.01f, 0.01f, 0.02f, 0.05f});
    p.soft2 = soft * soft;
    if (soft != softening) extra += ", softening " + std::to_string(soft);
    p.want = nbody::host_forces_f64(p.body.data(), n, p.soft2);
    INFO("case " << c);
    const auto got = run_stage(p.body, cfg, p.soft2, at);
    check_against_reference(describe(n, cfg, at) + extra, got, p);
    if (stage.forces_host && cfg.parts != 1) {
      nbody::config one = cfg;
      one.parts = 1;
      one.gpus = 1;
      const auto single = run_stage(p.body, one, p.soft2);
      for (std::size_t i = 0; i < n; ++i)
        if (std::memcmp(&got[i], &single[i], sizeof(float4)) != 0)
          FAIL("stage " << stage.info.id << ", " << describe(n, cfg, at) << extra << ": force ["
                        << i << "] = (" << got[i].x << ", " << got[i].y << ", " << got[i].z << ", "
                        << got[i].w << ") differs from the 1-part run (" << single[i].x << ", "
                        << single[i].y << ", " << single[i].z << ", " << single[i].w << ")");
    }
  }
}
