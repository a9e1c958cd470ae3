// SPDX-License-Identifier: BSD-3-Clause
// Tests of stage 09, the CPU rival (host only): every instruction set this CPU supports, on one
// thread and on the pool, against the float64 reference within nbody::error_bound(n), and against
// the scalar path (listing 14.2's arithmetic) within twice that bound: the SIMD paths use a
// refined rsqrt estimate and sum in vector lanes, so they equal the scalar path to rounding, not
// bit for bit. Instruction sets the CPU lacks are reported, not run.
#include "cpu_nbody.h"
#include "host_nbody.h"

#include "common/parallel.h"
#include "common/random_fill.h"
#include "harness/catch.h"
#include "harness/test_support.h"

#include <cmath>
#include <cstring>
#include <vector>

namespace {
const nbody::cpu::stage &cpu_stage() { return course::test::stage_under_test<nbody::cpu::stage>(); }
}  // namespace

TEST_CASE("every supported SIMD path matches the reference and the scalar path", "[cpu]") {
  const auto &stage = cpu_stage();
  course::thread_pool pool;
  const float soft2 = 1e-4f;
  for (std::size_t n : {std::size_t(1), std::size_t(31), std::size_t(1000), std::size_t(4097)}) {
    const std::uint64_t seed = course::fresh_seed();
    INFO("n=" << n << " seed " << seed);
    const auto body = nbody::random_bodies(n, seed);
    const auto want = nbody::host_forces_f64(body.data(), n, soft2);
    std::vector<float4> scalar(n);
    stage.forces(scalar.data(), body.data(), n, soft2, nbody::cpu::isa::scalar, nullptr);
    for (auto s : nbody::cpu::all_isas) {
      if (!stage.supported(s)) {
        WARN("this CPU does not support " << nbody::cpu::to_string(s) << ": not tested");
        continue;
      }
      for (bool threaded : {false, true}) {
        INFO(nbody::cpu::to_string(s) << (threaded ? " on the pool" : " on one thread"));
        std::vector<float4> got(n);
        course::test::poison_host(got.data(), n);
        stage.forces(got.data(), body.data(), n, soft2, s, threaded ? &pool : nullptr);
        for (std::size_t i = 0; i < n; ++i) {
          const double err = nbody::relative_error(got[i], want[i]);
          if (!(err <= nbody::error_bound(n)) || got[i].w != 0.f)
            FAIL("force [" << i << "]: relative error " << err << " > " << nbody::error_bound(n));
          const double diff = nbody::relative_difference(got[i], scalar[i], want[i]);
          if (!(diff <= 2 * nbody::error_bound(n)))
            FAIL("force [" << i << "] differs from the scalar path by " << diff);
        }
      }
    }
  }
  SUCCEED();
}

TEST_CASE("an instruction set the CPU lacks is refused", "[cpu]") {
  const auto &stage = cpu_stage();
  CHECK(stage.supported(nbody::cpu::isa::scalar));
  CHECK(stage.supported(stage.best()));
  for (auto s : nbody::cpu::all_isas) {
    if (stage.supported(s)) continue;
    std::vector<float4> body(16, float4{0, 0, 0, 1}), f(16);
    CHECK_THROWS(stage.forces(f.data(), body.data(), 16, 1e-4f, s, nullptr));
  }
}
