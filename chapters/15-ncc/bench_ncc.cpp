// SPDX-License-Identifier: BSD-3-Clause
// Chapter 15 benchmark: every NCC stage and NPP's nppiCrossCorrValid_NormLevel_8u32f_C1R in one
// run (the book's 15.6 measurement, plus the baseline). One function per table, each declaring
// its stages, baseline and ceilings (harness/bench_decl.h); the measuring frame (options,
// adaptive repeats, L2 flush, interleaving, NVTX profile ranges, failure accounting) is
// harness/bench_session.h. Every timed row has median/min/max/repeats/spread.
//
// progression (--width x --height, default 1024 x 1024, --wTemplate x --hTemplate, default
// 16 x 16, on the generated scene): each stage, its path at this size (a compiled-in size, the
// generic instance, the FFT, or the texture-texture fallback), Gtpix/s (template pixels: outputs
// x w x h per second, the book's rate), speed-up over the previous stage, ratio to NPP. Each
// stage's coefficients are checked against the host's float64 ones (|error| <= 2e-5).
// vs_NPP: the fastest stage of the progression and NPP interleaved (A-B-A-B...), the ratio with
// its range over the pairs; the headline and the goal >= 10x NPP.
// by_template (--sweep, default 8..96): Gtpix/s against the template size for 08 (the best direct
// stage), 05 (the book's corrShared4, the kernel of its figure 15.6), 09 (the FFT) and NPP.
// vs_NPP_by_template: at each size the fastest stage and the fastest on a generic direct path (no
// compile-time size), each interleaved with NPP, against the goal >= 10x NPP; with
// --generic-at-compiled-sizes, 07 and 08's generic kernel also runs at the sizes they compile in.
// The stages' coefficients at each size are checked against the first stage's there (4e-5).
// bank (--bank K, default 32, of --bankTemplate square templates, default 16): stage 10 in one
// call, K calls of the best single-template stage, K calls of NPP, cuBLAS's int8 GEMM on an
// im2col matrix (GEMM alone, im2col + GEMM, whole); rate in template-pixel products/s; stage 10
// against cuBLAS whole interleaved; its goal per GPU (harness/bench_goals.h: >= 100e12 products/s
// on the H100 and H200; none elsewhere). Every plane is checked against the K single-stage calls
// (4e-5), and plane 0 of those against the host. Profile ranges (make profile-capture): each
// progression row's call and NPP's, and two more: the bank call (10_tensor_bank (one call)) and 08
// at 52x52 in by_template (its generic kernel). A wrong coefficient anywhere is reported and makes
// the program exit 1.
#include "cublas_bank.h"
#include "host_ncc.h"
#include "ncc.h"
#include "npp_baseline.h"
#include "scene.h"

#include "common/cli.h"
#include "harness/bench.h"
#include "harness/bench_decl.h"
#include "harness/bench_goals.h"
#include "harness/bench_session.h"
#include "harness/test_support.h"

#include <cufft.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace bench = course::bench;
using bench::cell;
using bench::plot_hint;
using bench::table;

namespace {

#if NCC_HAVE_NPP
constexpr bool have_npp = true;
#else
constexpr bool have_npp = false;
#endif

const std::string npp_label = "NPP CrossCorrValid_NormLevel";
// Four template-pixel products per IDP4A: the rate of a stage whose loop is nothing but IDP4A
// (stages 07 and 08 approach it; the tensor-core stage is not bound by it).
const std::string ceiling_label = "ceiling: IDP4A rate x 4";
constexpr double goal_vs_npp = 10.0;  // the best stage >= 10x NPP at every size

struct options_t {
  // The defaults: chapters/15-ncc/lessons.toml's [workload.bench] (COURSE_BENCH_*, from CMake).
  std::int64_t width = COURSE_BENCH_WIDTH, height = COURSE_BENCH_HEIGHT,
               w_template = COURSE_BENCH_WTEMPLATE, h_template = COURSE_BENCH_HTEMPLATE,
               bank = COURSE_BENCH_BANK, bank_template = COURSE_BENCH_BANKTEMPLATE;
  std::string sweep = "8,12,16,20,24,28,32,40,48,52,64,96";
  bool generic_at_compiled_sizes = false;
};

std::string size_text(int w, int h) { return std::to_string(w) + "x" + std::to_string(h); }
bool starts_with(const std::string &s, const std::string &p) { return s.rfind(p, 0) == 0; }

std::string fixed(double v, int decimals = 2) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// The kernel a stage ran at a template size. The compiled-in sizes mirror the stages' choice
// (06_template_size's region: 8 and 16; lesson_dp4a.cuh's launch_by_size for 07 and 08: 8, 12, 16,
// 20, 24 and 32, all of which fit the constant bank): keep them in step.
std::string path_text(const ncc::stage &st, int tw, int th, ncc::path taken) {
  if (taken != ncc::path::own) return "fallback (texture-texture)";
  const std::string &id = st.info.id;
  if (id.find("fft") != std::string::npos) return "FFT";
  if (id.find("tensor") != std::string::npos) return "generic (tensor cores, K = 1)";
  std::vector<int> sizes;
  if (starts_with(id, "06_")) sizes = {8, 16};
  if (starts_with(id, "07_") || starts_with(id, "08_")) sizes = {8, 12, 16, 20, 24, 28, 32};
  if (tw == th && std::find(sizes.begin(), sizes.end(), tw) != sizes.end())
    return "compiled-in " + size_text(tw, th);
  return "generic";
}
bool generic_direct(const std::string &path) { return starts_with(path, "generic"); }

const ncc::stage *find_stage(const char *prefix) {
  for (const auto &s : course::registered<ncc::stage>())
    if (starts_with(s.info.id, prefix) && !s.info.todo) return &s;
  return nullptr;
}

bool is_bank_stage(const ncc::stage &st) {
  for (const auto &b : course::registered<ncc::bank_stage>())
    if (b.info.id == st.info.id) return true;
  return false;
}

std::vector<int> parse_list(const std::string &text) {
  std::vector<int> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const int v = std::atoi(item.c_str());
    if (v <= 0) throw std::invalid_argument("--sweep: '" + item + "' is not a template size");
    out.push_back(v);
  }
  return out;
}

// One image and one template on the device, NPP's baseline for them, and the buffers a row times
// into: coef for the stages, lib for NPP (so an interleaved pair leaves the stage's result).
struct sized {
  ncc::scene sc;
  ncc::problem p;
  int tw, th;
  std::size_t n, bytes;  // outputs; the working set of a call (image and coefficients)
  double tpix;           // template pixels per call
  course::device_buffer<float> coef, lib;
  std::vector<float> ref;  // a size's first stage's coefficients (by_template's check)
  std::string ref_by;
#if NCC_HAVE_NPP
  ncc::npp_baseline npp;
#endif
  sized(int W, int H, int tw_, int th_)
      : sc(ncc::make_scene(W, H, tw_, th_)),
        p(sc.image, sc.templ),
        tw(tw_),
        th(th_),
        n(p.outputs()),
        bytes(p.v().pitch * std::size_t(H) + n * sizeof(float)),
        tpix(double(n) * tw_ * th_),
        coef(n),
        lib(n)
#if NCC_HAVE_NPP
        ,
        npp(p)
#endif
  {
  }
  bench::work stage(const ncc::stage &st, ncc::path *taken = nullptr) {
    return [this, &st, taken](cudaStream_t s) {
      ncc::output o;
      o.coef = coef.get();
      const ncc::path t = st.run(p, o, s);
      if (taken) *taken = t;
    };
  }
  bench::work library() {
#if NCC_HAVE_NPP
    return [this](cudaStream_t s) { npp.run(lib.get(), s); };
#else
    return [](cudaStream_t) { throw std::logic_error("NPP is not built"); };
#endif
  }
  void clear() { CUDA_CHECK(cudaMemset(coef.get(), 0xFF, n * sizeof(float))); }
  std::vector<float> read(cudaStream_t s) const {
    CUDA_CHECK(cudaStreamSynchronize(s));
    std::vector<float> got(n);
    CUDA_CHECK(cudaMemcpy(got.data(), coef.get(), n * sizeof(float), cudaMemcpyDeviceToHost));
    return got;
  }
  // The stage's coefficients against the first stage's at this size (which become the reference).
  void compare(bench::session &s, const std::string &who) {
    std::vector<float> got = read(s.stream());
    if (ref.empty()) {
      ref = std::move(got), ref_by = who;
      return;
    }
    const long long i = bench::first_mismatch(got, ref, 4e-5);
    if (i >= 0)
      s.fail(who + " and " + ref_by + " differ at [" + std::to_string(i) +
             "]: " + fixed(got[std::size_t(i)], 7) + " vs " + fixed(ref[std::size_t(i)], 7));
  }
};

// What every table uses: the bench-size problem, the host's coefficients, the progression's picks.
struct context {
  bench::session &s;
  const options_t &opt;
  int W, H;
  sized main;
  std::vector<double> want;  // the host's float64 coefficients at the bench size
  const ncc::stage *best = nullptr, *best_single = nullptr;  // fastest; fastest without a bank form
  std::string best_path;
  double ceiling_gtpix = 0;  // the IDP4A rate x 4, when the progression measured it

  context(bench::session &session, const options_t &o)
      : s(session),
        opt(o),
        W(int(o.width)),
        H(int(o.height)),
        main(W, H, int(o.w_template), int(o.h_template)),
        want(ncc::host_coefficients(ncc::host_reference_sums(main.sc.image, main.sc.templ),
                                    main.p.stats())) {}
  bool npp_selected(const std::string &label) const { return have_npp && s.selected(label); }
  void check_host(const std::string &who) {
    bench::expect_near(s, who, main.read(s.stream()), want, 2e-5,
                       [](std::size_t i) { return ": coefficient [" + std::to_string(i) + "]"; });
  }
};

void progression_table(context &c) {
  sized &z = c.main;
  bench::declared_progression prog(
      c.s, {"progression",
            "NCC progression (" + size_text(c.W, c.H) + ", template " + size_text(z.tw, z.th) + ")",
            "path", "Gtpix/s", z.tpix, "%ceiling", "vs_NPP", plot_hint::stage_bars("Gtpix/s")});
  prog.ceiling(ceiling_label, "-", [&] {  // Gtpix/s
    const double dp4a = bench::dp4a_per_s(), ceiling = 4 * dp4a / 1e9;
    c.s.results().param("dp4a_per_s", dp4a);
    c.ceiling_gtpix = ceiling;
    std::printf(
        "IDP4A rate measured: %.4g/s (every lane counted) -> %.0f Gtpix/s at four template-pixel products each\n",
        dp4a, ceiling);
    return ceiling;
  });
  if (have_npp) prog.baseline(npp_label, z.library(), z.bytes);
  bench::fastest<const ncc::stage *> best, best_single;  // best_single: no bank form
  prog.stage_loop<ncc::stage>([&](const ncc::stage &st) {
    if (!c.s.selected(st.info.id)) return;
    ncc::path taken = ncc::path::own;
    z.clear();
    z.stage(st, &taken)(c.s.stream());
    c.check_host(st.info.id);
    const std::string path = path_text(st, z.tw, z.th, taken);
    const double ms = prog.stage(st.info.id, path, z.stage(st), z.bytes).per_call.median;
    if (best.offer(&st, ms)) c.best_path = path;
    if (!is_bank_stage(st)) best_single.offer(&st, ms);
  });
  if (best) c.best = *best;
  if (best_single) c.best_single = *best_single;
  if (!have_npp) std::printf("NPP not found at build time: the NPP rows and ratios are skipped\n");
  prog.finish();
}

// The fastest stage of the progression against NPP, interleaved: the chapter's headline.
void vs_npp_table(context &c) {
  if (!c.best || !c.npp_selected(npp_label)) return;
  sized &z = c.main;
  const std::string &id = c.best->info.id, at = size_text(z.tw, z.th);
  bench::versus t(
      c.s,
      bench::versus_spec(
          "vs_NPP",
          "NCC " + id + " against NPP, interleaved (ratio = NPP time / stage time, per pair), " +
              size_text(c.W, c.H),
          "NPP", {{"stage", 0}, {"path", 0}, {"template", 0}})
          .in_microseconds()
          .ratio_digits(2)
          .goal_at_least(goal_vs_npp));
  const auto cmp = t.pair(
      {id, c.best_path, at}, z.library(), z.stage(*c.best), z.bytes,
      [&] { c.check_host(id + " (interleaved with NPP)"); }, id, npp_label);
  t.note("goal for the reference: the best stage >= " + fixed(goal_vs_npp, 0) +
         "x NPP (median of the pairs): " + fixed(cmp.ratio.median) + "x -> " +
         bench::verdict(bench::versus_met(t.spec(), cmp)));
  // The goal at the progression's 16x16 template, set per GPU (harness/bench_goals.h): against
  // NPP, and as a share of the IDP4A ceiling (the best stage's median per call).
  const bench::gpu_goals *g = bench::goals_for(c.s.device());
  if (g && g->ncc_vs_npp_16 > 0 && z.tw == 16 && z.th == 16) {
    const double ms = cmp.stage.per_call.median;
    const double pct =
        ms > 0 && c.ceiling_gtpix > 0 ? 100 * z.tpix / (ms * 1e6) / c.ceiling_gtpix : 0;
    t.note(bench::goal_for_text(c.s.device()) + " at 16x16: the best stage >= " +
           fixed(g->ncc_vs_npp_16, 0) + "x NPP and >= " + fixed(g->ncc_ceiling_pct_16, 0) +
           "% of the IDP4A ceiling: " + fixed(cmp.ratio.median) + "x -> " +
           bench::verdict(cmp.ratio.median >= g->ncc_vs_npp_16) + ", " + fixed(pct, 1) + "% -> " +
           bench::verdict(pct >= g->ncc_ceiling_pct_16));
  }
  const std::string kind = starts_with(c.best_path, "compiled-in") ? "a compiled-in size"
                                                                   : "the " + c.best_path + " path";
  c.s.results().headline("NCC " + id + " " + bench::range_text(cmp.ratio) + " NPP at " + at + ", " +
                         kind + " (range over " + std::to_string(cmp.ratio.pairs) +
                         " interleaved pairs; " + size_text(c.W, c.H) + " image)");
  t.finish();
}

// A stage at one template size, with the kernel it ran there; forced: its generic kernel at a size
// it compiles in (--generic-at-compiled-sizes).
struct candidate {
  const ncc::stage *st;
  std::string path;
  bool forced = false;
};

// Turns ncc::generic_at_compiled_sizes on for one call (and off again, whatever the call does).
struct generic_forced {
  generic_forced() { ncc::generic_at_compiled_sizes = true; }
  ~generic_forced() { ncc::generic_at_compiled_sizes = false; }
  generic_forced(const generic_forced &) = delete;
  generic_forced &operator=(const generic_forced &) = delete;
};

// A candidate's call: the stage's own, or its generic kernel forced.
bench::work call_of(sized &z, const candidate &k) {
  bench::work w = z.stage(*k.st);
  if (!k.forced) return w;
  return [w](cudaStream_t s) {
    generic_forced on;
    w(s);
  };
}

// The goal >= 10x NPP across the sizes: the fastest stage, and the fastest generic direct path.
struct tally {
  bench::goal_tally best, generic;
};

// by_template's row of one timed series at one size, in microseconds.
void series_row(table &lines, int size, const std::string &series, double tpix,
                const bench::measurement &m) {
  const auto &p = m.per_call;
  lines.add_row({double(size), series, 1e3 * p.median, tpix / (p.median * 1e6), 1e3 * p.min,
                 1e3 * p.max, double(p.repeats), 100 * p.spread});
}

// by_template's rows at one size: 08, 05 and 09 (the book's figure 15.6), each timed on its own.
// 08 at 52x52 is also a profile range: its generic kernel at the size of the book's
// corrShared4Dp4a figure (the progression's 16x16 call runs its compiled-in kernel).
constexpr int profiled_generic_size = 52;
void series_rows(context &c, sized &z, const std::vector<candidate> &cands, table &lines) {
  const std::string at = " " + size_text(z.tw, z.th);
  const ncc::stage *blocked = find_stage("08");
  for (const ncc::stage *want : {blocked, find_stage("05"), find_stage("09")}) {
    if (!want ||
        std::none_of(cands.begin(), cands.end(), [&](const candidate &k) { return k.st == want; }))
      continue;
    const bool profiled =
        want == blocked && z.tw == profiled_generic_size && z.th == profiled_generic_size;
    const auto m = c.s.time(want->info.id + at, z.stage(*want), z.bytes, profiled);
    series_row(lines, z.tw, want->info.id, z.tpix, m);
    bench::warn_if_noisy(lines, want->info.id + at, m);
  }
}

// vs_NPP_by_template's rows at one size: the fastest stage, and the fastest on a generic direct
// path when that is another, each interleaved with NPP; returns NPP's time (for by_template).
std::optional<bench::measurement> goal_rows(context &c, sized &z,
                                            const std::vector<candidate> &cands,
                                            bench::versus &goals, tally &tl) {
  const std::string at = size_text(z.tw, z.th);
  bench::fastest<const candidate *> best, generic;
  for (const auto &k : cands) {
    const auto ms = c.s.quick(call_of(z, k), z.bytes);
    if (!ms) continue;
    best.offer(&k, *ms);
    if (generic_direct(k.path)) generic.offer(&k, *ms);
  }
  std::vector<const candidate *> rows;
  if (best) rows.push_back(*best);
  if (generic && *generic != *best) rows.push_back(*generic);
  std::optional<bench::measurement> npp;
  for (const candidate *k : rows) {
    const bool is_best = k == *best, is_generic = generic && k == *generic;
    const std::string kind =
        is_best ? (is_generic ? "fastest (generic direct)" : "fastest") : "fastest generic direct";
    const auto cmp = goals.pair(
        {double(z.tw), kind, k->st->info.id, k->path}, z.library(), call_of(z, *k), z.bytes,
        [&] { z.compare(c.s, k->st->info.id + " " + at + " (interleaved with NPP)"); },
        k->st->info.id + " " + at);
    const bool met = bench::versus_met(goals.spec(), cmp);
    const std::string where = at + " (" + fixed(cmp.ratio.median) + "x)";
    if (is_best) tl.best.add(met, where);
    if (is_generic) tl.generic.add(met, where);
    if (!npp) npp = cmp.baseline;
  }
  return npp;
}

// One square template size: the stages that run there, checked against each other; their rows.
void template_size(context &c, int size, table &lines, bench::versus &goals, tally &tl) {
  sized z(c.W, c.H, size, size);
  const std::string at = " " + size_text(size, size);
  std::vector<candidate> cands;
  for (const auto &st : course::registered<ncc::stage>()) {
    if (st.info.todo || !c.s.selected(st.info.id + at)) continue;
    ncc::path taken = ncc::path::own;
    z.clear();
    z.stage(st, &taken)(c.s.stream());
    z.compare(c.s, st.info.id + at);
    cands.push_back({&st, path_text(st, size, size, taken)});
    // The same stage's generic kernel at a size it compiles in, checked like any other.
    if (c.opt.generic_at_compiled_sizes && starts_with(cands.back().path, "compiled-in") &&
        !starts_with(st.info.id, "06_")) {
      const candidate forced{&st, "generic (forced at a compiled-in size)", true};
      z.clear();
      call_of(z, forced)(c.s.stream());
      z.compare(c.s, st.info.id + at + " (generic kernel)");
      cands.push_back(forced);
    }
  }
  series_rows(c, z, cands, lines);
  if (!c.npp_selected("NPP" + at)) return;
  if (const auto npp = goal_rows(c, z, cands, goals, tl))
    series_row(lines, size, "NPP", z.tpix, *npp);
}

// Gtpix/s against the template size (by_template) and the goal at each size (vs_NPP_by_template).
void by_template_tables(context &c) {
  table lines("by_template", "Gtpix/s against the template size (" + size_text(c.W, c.H) + ")",
              {{"template", 0},
               {"series", 0},
               {"time_us", 1},
               {"Gtpix/s", 1},
               {"min_us", 1},
               {"max_us", 1},
               {"repeats", 0},
               {"spread%", 2}});
  bench::versus goals(
      c.s,
      bench::versus_spec(
          "vs_NPP_by_template",
          "The fastest stage and the fastest generic direct path against NPP by template size, "
          "interleaved (ratio = NPP time / stage time); goal: >= " +
              fixed(goal_vs_npp, 0) + "x at every size",
          "NPP", {{"template", 0}, {"kind", 0}, {"stage", 0}, {"path", 0}})
          .in_microseconds()
          .ratio_digits(2)
          .goal_at_least(goal_vs_npp));
  tally tl;
  if (c.opt.generic_at_compiled_sizes)
    c.s.results().param("generic_at_compiled_sizes", std::string("on"));
  std::vector<int> sizes;
  for (int size : parse_list(c.opt.sweep))
    if (size <= c.W && size <= c.H && size * size <= ncc::max_template_pixels)
      sizes.push_back(size);
  for (int size : sizes) template_size(c, size, lines, goals, tl);
  const std::string span =
      sizes.empty() ? "" : std::to_string(sizes.front()) + ".." + std::to_string(sizes.back());
  if (tl.best.total() > 0) {
    goals.note("goal >= " + fixed(goal_vs_npp, 0) +
               "x NPP (median of the pairs), the fastest stage: " + tl.best.note());
    goals.note("the fastest generic direct path (no compile-time size): " + tl.generic.note());
    if (c.opt.generic_at_compiled_sizes)
      goals.note(
          "--generic-at-compiled-sizes: 07 and 08 also ran their generic instance at the sizes they compile in (8, 12, "
          "16, 20, 24, 28, 32), path \"generic (forced at a compiled-in size)\"");
    else
      goals.note(
          "07 and 08 run their generic instance only at sizes they do not compile in (not 8, 12, 16, 20, 24, 28, 32): "
          "there the generic row is another stage's generic path");
    c.s.results().headline("NCC fastest stage >= " + fixed(goal_vs_npp, 0) +
                           "x NPP at every square template " + span +
                           " (median of the interleaved pairs): " + tl.best.brief() +
                           "; generic direct path: met at " + std::to_string(tl.generic.met()) +
                           " of " + std::to_string(tl.generic.total()));
  }
  plot_hint hint{"lines", "template", "Gtpix/s"};
  hint.series = "series";
  hint.logy = true;
  lines.set_plot(hint);
  c.s.finish(std::move(lines));
  goals.finish();
}

// --- the bank of templates -----------------------------------------------------------------------
std::vector<course::gray_image> cut_templates(const course::gray_image &image, int K, int size) {
  std::vector<course::gray_image> out;
  for (int k = 0; k < K; ++k) {
    const int x = int(std::uint64_t(k) * 7919 % std::uint64_t(image.width - size + 1));
    const int y = int(std::uint64_t(k) * 104729 % std::uint64_t(image.height - size + 1));
    out.push_back(image.crop(x, y, size, size));
  }
  return out;
}

// K templates cut from the scene's image (the first at (0, 0)), the K single problems, the
// reference planes (K calls of the best single-template stage) and the planes a row writes.
struct bank_case {
  int K, size;
  std::vector<course::gray_image> templates;
  ncc::bank_problem bank;
  std::size_t plane, all;
  double products;  // template-pixel products per call
  std::vector<std::unique_ptr<ncc::problem>> singles;
  course::device_buffer<float> ref, coef;
  std::string label_single, label_npp;

  bank_case(const course::gray_image &image, int K_, int size_)
      : K(K_),
        size(size_),
        templates(cut_templates(image, K_, size_)),
        bank(image, templates),
        plane(bank.outputs()),
        all(plane * std::size_t(K_)),
        products(double(all) * size_ * size_),
        ref(all),
        coef(all),
        label_single(std::to_string(K_) + " calls of "),
        label_npp(std::to_string(K_) + " calls of NPP") {
    for (const auto &t : templates) singles.push_back(std::make_unique<ncc::problem>(image, t));
  }
  bench::work single_calls(const ncc::stage &st) {
    return [this, &st](cudaStream_t s) {
      for (int k = 0; k < K; ++k) {
        ncc::output o;
        o.coef = ref.get() + std::size_t(k) * plane;
        st.run(*singles[std::size_t(k)], o, s);
      }
    };
  }
  // K planes against the reference planes.
  void check(bench::session &s, const std::string &who, const float *d, double bound) const {
    CUDA_CHECK(cudaStreamSynchronize(s.stream()));
    bench::expect_near(s, "bank: " + who, course::test::copy_to_host(d, all),
                       course::test::copy_to_host(ref.get(), all), bound, [this](std::size_t i) {
                         return ": template " + std::to_string(i / plane) + ", output " +
                                std::to_string(i % plane);
                       });
  }
};

void bank_row(bench::timed_table &t, const bank_case &b, const std::string &label,
              const bench::measurement &m, double bank_ms) {
  t.add(label, {label}, m,
        {bench::rate(b.products, m), bank_ms > 0 ? cell(bank_ms / m.per_call.median) : cell()});
}

// The reference planes: K calls of the single stage, plane 0 checked against the host.
void bank_reference(context &c, bank_case &b, const ncc::stage &single) {
  b.single_calls(single)(c.s.stream());
  CUDA_CHECK(cudaStreamSynchronize(c.s.stream()));
  const auto want = ncc::host_coefficients(
      ncc::host_reference_sums(c.main.sc.image, b.templates[0]), b.singles[0]->stats());
  bench::expect_near(c.s, "bank: " + single.info.id,
                     course::test::copy_to_host(b.ref.get(), b.plane), want, 2e-5,
                     [](std::size_t i) { return ", template 0, output " + std::to_string(i); });
}

// The bank stage's row (its time, for vs_bank), and the K single calls and K NPP calls.
double bank_stage_rows(context &c, bank_case &b, bench::timed_table &t, const ncc::bank_stage *tc,
                       const ncc::stage &single) {
  double bank_ms = 0;
  const std::string tc_label = tc ? tc->info.id + " (one call)" : "";
  if (tc && c.s.selected(tc_label)) {
    ncc::bank_output o;
    o.coef = b.coef.get();
    CUDA_CHECK(cudaMemset(b.coef.get(), 0xFF, b.all * sizeof(float)));
    const auto m = c.s.time(
        tc_label, [&](cudaStream_t st) { tc->run(b.bank, o, st); }, b.all * sizeof(float), true);
    b.check(c.s, tc->info.id, b.coef.get(), 4e-5);
    bank_ms = m.per_call.median;
    bank_row(t, b, tc_label, m, bank_ms);
  } else if (!tc) {
    t.get().add_row({std::string("10_tensor_bank: TODO, not yet implemented")});
  }
  if (c.s.selected(b.label_single + single.info.id)) {
    const auto m =
        c.s.time(b.label_single + single.info.id, b.single_calls(single), b.all * sizeof(float));
    bank_row(t, b, b.label_single + single.info.id, m, bank_ms);
    t.get().note(b.label_single + single.info.id +
                 ": a stage that keeps its template in constant memory uploads it at each call "
                 "(cudaMemcpyToSymbolAsync and a stream sync): K uploads per row");
  }
#if NCC_HAVE_NPP
  if (c.s.selected(b.label_npp)) {
    std::vector<std::unique_ptr<ncc::npp_baseline>> npp;
    for (const auto &p : b.singles) npp.push_back(std::make_unique<ncc::npp_baseline>(*p));
    const auto m = c.s.time(
        b.label_npp,
        [&](cudaStream_t st) {
          for (int k = 0; k < b.K; ++k)
            npp[std::size_t(k)]->run(b.coef.get() + std::size_t(k) * b.plane, st);
        },
        b.all * sizeof(float));
    bank_row(t, b, b.label_npp, m, bank_ms);
  }
#else
  t.get().add_row({std::string("NPP: not found, skipped")});
#endif
  return bank_ms;
}

// cuBLAS's int8 GEMM rows, and stage 10 against cuBLAS whole, interleaved.
void bank_cublas_rows(context &c, bank_case &b, bench::timed_table &t, const ncc::bank_stage *tc,
                      double bank_ms) {
  const std::string gemm = "cuBLAS int8 GEMM alone", both = "cuBLAS im2col + GEMM",
                    whole = "cuBLAS whole (+ window sums, coefficients)";
  if (!c.s.selected(gemm) && !c.s.selected(both) && !c.s.selected(whole)) return;
  ncc::cublas_bank blas(b.bank);
  CUDA_CHECK(cudaMemset(b.coef.get(), 0xFF, b.all * sizeof(float)));
  blas.run(b.coef.get(), c.s.stream());
  b.check(c.s, "cuBLAS int8 GEMM", b.coef.get(), 4e-5);
  const std::size_t ws = blas.im2col_bytes() + b.all * 2 * sizeof(float);
  if (c.s.selected(gemm))
    bank_row(t, b, gemm,
             c.s.time(
                 gemm, [&](cudaStream_t st) { blas.gemm(st); }, ws),
             bank_ms);
  if (c.s.selected(both)) {
    bank_row(t, b, both,
             c.s.time(
                 both, [&](cudaStream_t st) { blas.im2col(st), blas.gemm(st); }, ws),
             bank_ms);
    t.get().note(both + ": the im2col matrix is " + std::to_string(blas.im2col_bytes() >> 20) +
                 " MiB");
  }
  if (!c.s.selected(whole)) return;
  bank_row(t, b, whole,
           c.s.time(
               whole, [&](cudaStream_t st) { blas.run(b.coef.get(), st); }, ws),
           bank_ms);
  if (!tc || !c.s.selected(tc->info.id + " (one call)")) return;
  ncc::bank_output o;
  o.coef = b.coef.get();
  const auto cmp = c.s.interleaved([&](cudaStream_t st) { blas.run(b.coef.get(), st); },
                                   [&](cudaStream_t st) { tc->run(b.bank, o, st); }, ws);
  b.check(c.s, tc->info.id + " (interleaved with cuBLAS)", b.coef.get(), 4e-5);
  t.get().note(tc->info.id + " against cuBLAS whole, interleaved: " + bench::range_text(cmp.ratio) +
               " (median " + fixed(cmp.ratio.median) + "x over " + std::to_string(cmp.ratio.pairs) +
               " pairs)");
}

// A bank of K templates: stage 10 in one call against K single calls, NPP and cuBLAS.
void bank_table(context &c) {
  const int K = int(c.opt.bank), size = int(c.opt.bank_template);
  if (K <= 0 || size > c.W || size > c.H) return;
  const ncc::stage *single = c.best_single ? c.best_single : find_stage("08");
  const ncc::bank_stage *tc = nullptr;
  for (const auto &b : course::registered<ncc::bank_stage>())
    if (!b.info.todo) tc = &b;
  if (!single) {
    std::printf("no single-template stage ran: the bank table is skipped\n");
    return;
  }
  const std::string calls = std::to_string(K) + " calls of ";
  const std::vector<std::string> labels = {tc ? tc->info.id + " (one call)" : "",
                                           calls + single->info.id,
                                           calls + "NPP",
                                           "cuBLAS int8 GEMM alone",
                                           "cuBLAS im2col + GEMM",
                                           "cuBLAS whole (+ window sums, coefficients)"};
  if (std::none_of(labels.begin(), labels.end(),
                   [&](const std::string &l) { return !l.empty() && c.s.selected(l); }))
    return;
  bank_case b(c.main.sc.image, K, size);
  std::printf("\nA bank of %d templates of %dx%d on %dx%d: %.3g template-pixel products per call\n",
              K, size, size, c.W, c.H, b.products);
  bench::timed_table t(c.s, "bank",
                       "A bank of " + std::to_string(K) + " templates of " + size_text(size, size) +
                           " (" + size_text(c.W, c.H) + ")",
                       {{"series", 0}}, {{"Gtpix/s", 1}, {"vs_bank", 2}});
  bank_reference(c, b, *single);
  const double bank_ms = bank_stage_rows(c, b, t, tc, *single);
  bank_cublas_rows(c, b, t, tc, bank_ms);
  if (bank_ms > 0) {
    const double rate = b.products / (bank_ms * 1e-3);
    // An absolute rate, set per GPU for its tensor cores (harness/bench_goals.h): a GPU without
    // one is compared with cuBLAS whole instead.
    const course::device_info &gpu = c.s.device();
    std::string verdict;
    if (const bench::gpu_goals *goals = bench::goals_for(gpu)) {
      const bool met = rate >= goals->ncc_bank;
      verdict = "; " + bench::goal_for_text(gpu) + " >= " + bench::e12_text(goals->ncc_bank) + " " +
                (met ? "met" : "MISSED");
      t.get().note(bench::goal_for_text(gpu) +
                   ": the bank stage >= " + bench::e12_text(goals->ncc_bank) +
                   " template-pixel products/s: " + fixed(rate / 1e12, 1) + "e12/s -> " +
                   (met ? "met" : "MISSED"));
    } else {
      t.get().note("no products/s goal is set for " + gpu.name + " (" + std::to_string(gpu.sms) +
                   " SMs): the goal is set for the " + bench::goal_gpus_text() +
                   "; compare with cuBLAS whole instead");
    }
    c.s.results().headline("NCC bank: " + tc->info.id + " " + fixed(rate / 1e12, 1) +
                           "e12 template-pixel products/s (median), " + std::to_string(K) +
                           " templates of " + size_text(size, size) + " on " + size_text(c.W, c.H) +
                           verdict);
  }
  t.get().set_plot({"bars", "series", "Gtpix/s"});
  t.finish();
}

void versions(bench::session &s) {
  s.results().version("cuBLAS", ncc::cublas_version());
  int fft = 0;
  if (cufftGetVersion(&fft) == CUFFT_SUCCESS) s.results().version("cuFFT", std::to_string(fft));
#if NCC_HAVE_NPP
  s.results().version("NPP", ncc::npp_version());
#endif
}

void body(bench::session &s, const options_t &opt) {
  const int W = int(opt.width), H = int(opt.height), tw = int(opt.w_template),
            th = int(opt.h_template);
  if (std::int64_t(tw) * th > ncc::max_template_pixels || tw > W || th > H)
    throw std::invalid_argument("template too large for the image or the 32768-pixel limit");
  versions(s);
  for (const auto &[name, value] : {std::pair<const char *, int>{"width", W},
                                    {"height", H},
                                    {"w_template", tw},
                                    {"h_template", th}})
    s.results().param(name, double(value));
  context c(s, opt);
  std::printf(
      "\nNCC of a %dx%d image with a %dx%d template: %zu coefficients, %.3g template pixels\n", W,
      H, tw, th, c.main.n, c.main.tpix);
  progression_table(c);
  vs_npp_table(c);
  by_template_tables(c);
  bank_table(c);
}

}  // namespace

int main(int argc, char **argv) {
  options_t opt;
  return bench::bench_main(
      argc, argv,
      {"bench_ncc", "15-ncc", "Chapter 15: normalized cross-correlation",
       "Chapter 15: normalized cross-correlation, every stage against NPP."},
      [&](course::options &cli) {
        cli.add("width", opt.width, 64, 16384, "image width")
            .add("height", opt.height, 64, 16384, "image height")
            .add("wTemplate", opt.w_template, 1, 181, "template width")
            .add("hTemplate", opt.h_template, 1, 181, "template height")
            .add("bank", opt.bank, 0, 256, "templates in the bank table (0: no bank table)")
            .add("bankTemplate", opt.bank_template, 1, 64,
                 "width and height of the bank's templates")
            .add("sweep", opt.sweep, "template sizes (square) for by_template, comma-separated")
            .flag(
                "generic-at-compiled-sizes", opt.generic_at_compiled_sizes,
                "by_template: also time 07 and 08's generic kernel at the sizes they compile in (8, 12, ..., 32), "
                "so the generic path's goal is judged on the generic kernel there too");
      },
      [&](bench::session &s) { body(s, opt); });
}
