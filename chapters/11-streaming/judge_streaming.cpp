// SPDX-License-Identifier: BSD-3-Clause
// The speed verdict's workload for chapter 11 (harness/judge.h): a device stage's SAXPY on arrays
// far larger than L2 (n floats in device memory), or a host stage's SAXPY through the host (its
// own host arrays, wall time; the stage synchronises).
// Parameters: n, threads, blocks, unroll (device stages); n, streams (host stages).
#include "host_context.h"
#include "streaming.h"

#include "common/random_fill.h"
#include "harness/judge.h"

#include <memory>
#include <string>

using course::judge::params;
using course::judge::workload;

namespace {

constexpr float alpha = 1.5f;

workload device_workload(const streaming::device_stage &st, const params &p) {
  const auto n = std::size_t(p.integer("n", COURSE_WORKLOAD_N));
  streaming::launch_config cfg;
  cfg.threads = int(p.integer("threads", cfg.threads));
  cfg.blocks = int(p.integer("blocks", cfg.blocks));
  cfg.unroll = int(p.integer("unroll", cfg.unroll));
  struct buffers {
    course::device_buffer<float> out, x, y;
    explicit buffers(std::size_t n) : out(n), x(n), y(n) {}
  };
  auto b = std::make_shared<buffers>(n);
  course::fill_random_device(b->x.get(), n, 1);
  course::fill_random_device(b->y.get(), n, 2);
  workload w;
  w.description = "n = " + std::to_string(n) + " floats, " + std::to_string(cfg.threads) +
                  " threads" + (st.unrolls ? " x " + std::to_string(cfg.unroll) : std::string());
  w.call = [&st, b, n, cfg](cudaStream_t s) {
    st.saxpy(b->out.get(), b->x.get(), b->y.get(), n, alpha, cfg, s);
  };
  w.keep = b;
  return w;
}

workload host_workload(const streaming::host_stage &st, const params &p) {
  const auto n = std::size_t(p.integer("n"));
  const int streams = int(p.integer("streams", 4));
  struct arrays {
    streaming::owned_host_context ctx;
    streaming::stage_host_buffer out, x, y;
    arrays(const streaming::host_stage &st, std::size_t n, int streams)
        : ctx(n, streams), out(st, n), x(st, n), y(st, n) {}
  };
  auto a = std::make_shared<arrays>(st, n, streams);
  course::fill_random_host(a->x.get(), n, 1);
  course::fill_random_host(a->y.get(), n, 2);
  a->ctx.get().n_streams = streams;
  workload w;
  w.description = "n = " + std::to_string(n) + " floats through the host, " +
                  std::to_string(streams) + " streams";
  w.host_timed = true;
  w.call = [&st, a, n](cudaStream_t) {
    st.saxpy(a->out.get(), a->x.get(), a->y.get(), n, alpha, a->ctx.get());
  };
  w.keep = a;
  return w;
}

}  // namespace

workload course::judge::make_workload(const params &p) {
  if (const auto *st = linked_stage<streaming::device_stage>()) return device_workload(*st, p);
  if (const auto *st = linked_stage<streaming::host_stage>()) return host_workload(*st, p);
  throw std::logic_error("no chapter-11 stage is linked into this judge program");
}
