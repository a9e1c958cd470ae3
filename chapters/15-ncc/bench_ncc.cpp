// SPDX-License-Identifier: BSD-3-Clause
// Chapter 15 benchmark: every NCC stage and NPP's nppiCrossCorrValid_NormLevel_8u32f_C1R in one
// run (the book's 15.6 measurement, plus the baseline).
//
// Part 1 (--width x --height, default 1024 x 1024, --wTemplate x --hTemplate, default 16 x 16, on
// the generated scene): the progression. Mpix/s counts output coefficients, Gtpix/s template
// pixels (outputs x w x h, the book's "template pixel" rate). Each stage's coefficients are
// checked against the host's float64 ones (|error| <= 2e-5); a wrong one exits with status 1.
// Goal (reported, not asserted): the best stage >= 4x NPP at 16x16.
// Part 2 (--sweep, default 8..96): Gtpix/s against the template size for the best direct stage
// (08), the book's corrShared4 (stage 05: the kernel of the book's figure 15.6, whose 8x8 and
// 28x28 rates the README puts beside the book's), the FFT stage (09) and NPP: the shape of figure
// 15.6, and the size where the FFT overtakes the direct method. The stages' coefficients are
// checked against the direct stage's.
// Part 3 (--bank K, default 32, of --bankTemplate square templates, default 16, on the same
// image): a bank of K templates. Stage 10 correlates all K in one call on the tensor cores;
// beside it, K calls of the best single-template stage of part 1, K calls of NPP, and cuBLAS's
// int8 GEMM on an im2col matrix (ncc::cublas_bank), timed as the GEMM alone, im2col + GEMM, and
// the whole (with the window sums and coefficients). The rate is template-pixel products/s
// (K x outputs x w x h per second). Every plane of stage 10 and of cuBLAS is checked against the
// K single-stage calls (|difference| <= 4e-5), and plane 0 of those against the host.
// Goal (reported, not asserted): stage 10 >= 100e12 template-pixel products/s at K = 32, 16x16.
#include "cublas_bank.h"
#include "host_ncc.h"
#include "ncc.h"
#include "npp_baseline.h"
#include "scene.h"

#include "common/cli.h"
#include "harness/bench.h"

#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

using course::bench::cell;
using course::bench::table;

namespace {

struct options_t {
  std::int64_t width = 1024, height = 1024, w_template = 16, h_template = 16, repeats = 20, bank = 32,
               bank_template = 16;
  std::string sweep = "8,12,16,20,24,28,32,40,48,52,64,96", results = "results";
};

const ncc::stage *find_stage(const char *prefix) {
  for (const auto &s : course::registered<ncc::stage>())
    if (s.info.id.rfind(prefix, 0) == 0 && !s.info.todo) return &s;
  return nullptr;
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

// Part 3: a bank of K templates (cut from the scene, the first one its planted template).
bool bank_table(course::bench::report &rep, const ncc::scene &sc, int K, int size, const std::string &best_single,
                int repeats, cudaStream_t s) {
  bool ok = true;
  const int W = sc.image.width, H = sc.image.height;
  std::vector<course::gray_image> templates;
  for (int k = 0; k < K; ++k) {
    const int x = int(std::uint64_t(k) * 7919 % std::uint64_t(W - size + 1)), y = int(std::uint64_t(k) * 104729 % std::uint64_t(H - size + 1));
    templates.push_back(sc.image.crop(x, y, size, size));
  }
  ncc::bank_problem bank(sc.image, templates);
  const std::size_t plane = bank.outputs(), all = plane * std::size_t(K);
  const double products = double(all) * size * size;
  std::printf("\nA bank of %d templates of %dx%d on %dx%d: %.3g template-pixel products per call\n", K, size, size, W, H,
              products);
  course::device_buffer<float> ref(all), coef(all);
  table t("bank", "A bank of " + std::to_string(K) + " templates of " + std::to_string(size) + "x" + std::to_string(size) +
                      " (" + std::to_string(W) + "x" + std::to_string(H) + ")",
          {{"series", 0}, {"time_us", 1}, {"Gtpix/s", 1}, {"vs_bank", 2}});
  auto row = [&](const std::string &name, double ms, double bank_ms) {
    t.add_row({name, 1000 * ms, products / (ms * 1e6), bank_ms > 0 ? cell(bank_ms / ms) : cell()});
  };
  // Compares K planes with the reference planes (the K single-stage calls).
  auto check = [&](const std::string &who, const float *d, double bound) {
    std::vector<float> got(all), want(all);
    CUDA_CHECK(cudaMemcpy(got.data(), d, all * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(want.data(), ref.get(), all * sizeof(float), cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < all; ++i)
      if (!(std::fabs(got[i] - want[i]) <= bound)) {
        std::fprintf(stderr, "WRONG RESULT: bank: %s: template %zu, output %zu = %.7f, expected %.7f\n", who.c_str(), i / plane,
                     i % plane, got[i], want[i]);
        ok = false;
        return;
      }
  };
  // K calls of the best single-template stage: the reference planes, plane 0 checked on the host.
  std::vector<std::unique_ptr<ncc::problem>> singles;
  for (const auto &tk : templates) singles.push_back(std::make_unique<ncc::problem>(sc.image, tk));
  const ncc::stage *single = best_single.empty() ? nullptr : find_stage(best_single.c_str());
  if (!single) {
    std::printf("no single-template stage ran in part 1: the bank table is skipped\n");
    return ok;
  }
  auto single_calls = [&](cudaStream_t st) {
    for (int k = 0; k < K; ++k) {
      ncc::output o;
      o.coef = ref.get() + std::size_t(k) * plane;
      single->run(*singles[std::size_t(k)], o, st);
    }
  };
  const double single_ms = course::bench::time_device(single_calls, s, 2, repeats).median_ms;
  CUDA_CHECK(cudaStreamSynchronize(s));
  {
    const auto want = ncc::host_coefficients(ncc::host_reference_sums(sc.image, templates[0]), singles[0]->stats());
    std::vector<float> got(plane);
    CUDA_CHECK(cudaMemcpy(got.data(), ref.get(), plane * sizeof(float), cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < plane; ++i)
      if (!(std::fabs(got[i] - want[i]) <= 2e-5)) {
        std::fprintf(stderr, "WRONG RESULT: bank: %s, template 0, output %zu = %.7f, expected %.7f\n", single->info.id.c_str(), i,
                     got[i], want[i]);
        ok = false;
        break;
      }
  }
  double bank_ms = 0;
  const ncc::bank_stage *tc = nullptr;
  for (const auto &b : course::registered<ncc::bank_stage>())
    if (!b.info.todo) tc = &b;
  if (tc) {
    ncc::bank_output o;
    o.coef = coef.get();
    CUDA_CHECK(cudaMemset(coef.get(), 0xFF, all * sizeof(float)));
    bank_ms = course::bench::time_device([&](cudaStream_t st) { tc->run(bank, o, st); }, s, 3, repeats).median_ms;
    CUDA_CHECK(cudaStreamSynchronize(s));
    check(tc->info.id, coef.get(), 4e-5);
    row(tc->info.id + " (one call)", bank_ms, bank_ms);
  } else {
    t.add_row({std::string("10_tensor_bank: TODO, not yet implemented"), {}, {}, {}});
  }
  row(std::to_string(K) + " calls of " + single->info.id, single_ms, bank_ms);
#if NCC_HAVE_NPP
  {
    std::vector<std::unique_ptr<ncc::npp_baseline>> npp;
    for (const auto &p : singles) npp.push_back(std::make_unique<ncc::npp_baseline>(*p));
    const double npp_ms = course::bench::time_device([&](cudaStream_t st) {
                            for (int k = 0; k < K; ++k) npp[std::size_t(k)]->run(coef.get() + std::size_t(k) * plane, st);
                          }, s, 2, repeats).median_ms;
    row(std::to_string(K) + " calls of NPP", npp_ms, bank_ms);
  }
#else
  t.add_row({std::string("NPP: not found, skipped"), {}, {}, {}});
#endif
  {
    ncc::cublas_bank blas(bank);
    CUDA_CHECK(cudaMemset(coef.get(), 0xFF, all * sizeof(float)));
    blas.run(coef.get(), s);
    CUDA_CHECK(cudaStreamSynchronize(s));
    check("cuBLAS int8 GEMM", coef.get(), 4e-5);
    const double gemm_ms = course::bench::time_device([&](cudaStream_t st) { blas.gemm(st); }, s, 2, repeats).median_ms;
    const double both_ms = course::bench::time_device([&](cudaStream_t st) { blas.im2col(st), blas.gemm(st); }, s, 2,
                                                      repeats).median_ms;
    const double whole_ms = course::bench::time_device([&](cudaStream_t st) { blas.run(coef.get(), st); }, s, 2,
                                                       repeats).median_ms;
    row("cuBLAS int8 GEMM alone", gemm_ms, bank_ms);
    row("cuBLAS im2col + GEMM (" + std::to_string(blas.im2col_bytes() >> 20) + " MiB)", both_ms, bank_ms);
    row("cuBLAS whole (+ window sums, coefficients)", whole_ms, bank_ms);
  }
  t.set_plot(R"({"kind": "bars", "x": "series", "y": "Gtpix/s"})");
  t.print();
  if (bank_ms > 0)
    std::printf("goal (reported, not asserted): the bank stage >= 100e12 template-pixel products/s: %.3g/s -> %s\n",
                products / (bank_ms * 1e-3), products / (bank_ms * 1e-3) >= 100e12 ? "met" : "missed");
  rep.add(t);
  return ok;
}

}  // namespace

int main(int argc, char **argv) {
  options_t opt;
  course::options cli("bench_ncc", "Chapter 15: normalized cross-correlation, every stage against NPP.");
  cli.add("width", opt.width, 64, 16384, "image width")
      .add("height", opt.height, 64, 16384, "image height")
      .add("wTemplate", opt.w_template, 1, 181, "template width")
      .add("hTemplate", opt.h_template, 1, 181, "template height")
      .add("repeats", opt.repeats, 3, 1000, "timed repeats per measurement (the median is reported)")
      .add("bank", opt.bank, 0, 256, "templates in the bank of part 3 (0: no part 3)")
      .add("bankTemplate", opt.bank_template, 1, 64, "width and height of the bank's templates")
      .add("sweep", opt.sweep, "template sizes (square) for part 2, comma-separated")
      .add("results", opt.results, "directory for the CSV and JSON results");
  cli.parse(argc, argv);
  return course::bench::run("bench_ncc", "15-ncc", "Chapter 15: normalized cross-correlation", opt.results,
                            [&](course::bench::report &rep) {
    bool ok = true;
    const int W = int(opt.width), H = int(opt.height), tw = int(opt.w_template), th = int(opt.h_template);
    if (std::int64_t(tw) * th > ncc::max_template_pixels || tw > W || th > H)
      throw std::invalid_argument("template too large for the image or the 32768-pixel limit");
    rep.param("width", double(W));
    rep.param("height", double(H));
    rep.param("w_template", double(tw));
    rep.param("h_template", double(th));
    course::stream s;

    // --- Part 1: the progression ---------------------------------------------------------------
    const ncc::scene sc = ncc::make_scene(W, H, tw, th);
    ncc::problem p(sc.image, sc.templ);
    const std::size_t outputs = p.outputs();
    const double tpix = double(outputs) * tw * th;
    std::printf("\nNCC of a %dx%d image with a %dx%d template: %zu coefficients, %.3g template pixels\n", W, H, tw, th,
                outputs, tpix);
    const auto want = ncc::host_coefficients(ncc::host_reference_sums(sc.image, sc.templ), p.stats());
    course::device_buffer<float> coef(outputs);
    auto verify = [&](const std::string &who) {
      std::vector<float> got(outputs);
      CUDA_CHECK(cudaMemcpy(got.data(), coef.get(), outputs * sizeof(float), cudaMemcpyDeviceToHost));
      for (std::size_t i = 0; i < outputs; ++i)
        if (!(std::fabs(got[i] - want[i]) <= 2e-5)) {
          std::fprintf(stderr, "WRONG RESULT: %s: coefficient [%zu] = %.7f, expected %.7f\n", who.c_str(), i, got[i], want[i]);
          ok = false;
          return;
        }
    };
    auto clear = [&] { CUDA_CHECK(cudaMemset(coef.get(), 0xFF, outputs * sizeof(float))); };

    double npp_ms = 0;
#if NCC_HAVE_NPP
    {
      ncc::npp_baseline npp(p);
      auto t = course::bench::time_device([&](cudaStream_t st) { npp.run(coef.get(), st); }, s, 3, int(opt.repeats));
      npp_ms = t.median_ms;
    }
#else
    std::printf("NPP not found: baseline skipped\n");
#endif
    table prog("progression",
               "NCC progression (" + std::to_string(W) + "x" + std::to_string(H) + ", template " + std::to_string(tw) +
                   "x" + std::to_string(th) + ")",
               {{"stage", 0}, {"path", 0}, {"time_us", 1}, {"Mpix/s", 0}, {"Gtpix/s", 1}, {"vs_prev", 2}, {"vs_NPP", 2}});
    double prev_ms = 0, best_ms = 0, best_single_ms = 0;
    std::string best, best_single;
    for (const auto &stage : course::registered<ncc::stage>()) {
      if (stage.info.todo) {
        prog.add_row({stage.info.id, std::string("TODO: not yet implemented"), {}, {}, {}, {}, {}});
        continue;
      }
      ncc::output out;
      out.coef = coef.get();
      ncc::path taken = ncc::path::own;
      clear();
      auto t = course::bench::time_device([&](cudaStream_t st) { taken = stage.run(p, out, st); }, s, 3, int(opt.repeats));
      CUDA_CHECK(cudaStreamSynchronize(s));
      verify(stage.info.id);
      const double ms = t.median_ms;
      prog.add_row({stage.info.id, std::string(taken == ncc::path::own ? "own" : "fallback"), 1000 * ms,
                    outputs / (ms * 1e3), tpix / (ms * 1e6), prev_ms > 0 ? cell(prev_ms / ms) : cell(),
                    npp_ms > 0 ? cell(npp_ms / ms) : cell()});
      prev_ms = ms;
      if (best_ms == 0 || ms < best_ms) best_ms = ms, best = stage.info.id;
      if (!course::registered<ncc::bank_stage>().empty() && stage.info.id == course::registered<ncc::bank_stage>().front().info.id)
        continue;  // the bank stage at K = 1 is no single-template stage to call K times
      if (best_single_ms == 0 || ms < best_single_ms) best_single_ms = ms, best_single = stage.info.id;
    }
    if (npp_ms > 0)
      prog.add_row({std::string("NPP CrossCorrValid_NormLevel"), std::string("library"), 1000 * npp_ms,
                    outputs / (npp_ms * 1e3), tpix / (npp_ms * 1e6), cell(), 1.0});
    prog.set_plot(R"({"kind": "bars", "x": "stage", "y": "Gtpix/s"})");
    prog.print();
    if (npp_ms > 0)
      std::printf("goal (reported, not asserted): best stage >= 4x NPP: %s at %.2fx NPP -> %s\n", best.c_str(),
                  npp_ms / best_ms, npp_ms / best_ms >= 4 ? "met" : "missed");
    rep.add(prog);

    // --- Part 2: rate against the template size -------------------------------------------------
    const ncc::stage *direct = find_stage("08"), *book = find_stage("05"), *fft = find_stage("09");
    table sweep("by_template", "Gtpix/s against the template size (" + std::to_string(W) + "x" + std::to_string(H) + ")",
                {{"template", 0}, {"series", 0}, {"time_us", 1}, {"Gtpix/s", 1}});
    for (int size : parse_list(opt.sweep)) {
      if (size > W || size > H || size * size > ncc::max_template_pixels) continue;
      const ncc::scene sc2 = ncc::make_scene(W, H, size, size);
      ncc::problem p2(sc2.image, sc2.templ);
      const std::size_t n2 = p2.outputs();
      const double tp2 = double(n2) * size * size;
      std::vector<float> first;
      course::device_buffer<float> c2(n2);
      for (const ncc::stage *st : {direct, book, fft}) {
        if (!st) continue;
        ncc::output out;
        out.coef = c2.get();
        auto t = course::bench::time_device([&](cudaStream_t stream) { st->run(p2, out, stream); }, s, 2, int(opt.repeats));
        CUDA_CHECK(cudaStreamSynchronize(s));
        sweep.add_row({double(size), st->info.id, 1000 * t.median_ms, tp2 / (t.median_ms * 1e6)});
        std::vector<float> got(n2);
        CUDA_CHECK(cudaMemcpy(got.data(), c2.get(), n2 * sizeof(float), cudaMemcpyDeviceToHost));
        if (first.empty()) {
          first = got;
        } else {
          for (std::size_t i = 0; i < n2; ++i)
            if (!(std::fabs(got[i] - first[i]) <= 4e-5)) {
              std::fprintf(stderr, "WRONG RESULT: %dx%d: %s and the direct stage differ at [%zu]: %.7f vs %.7f\n", size,
                           size, st->info.id.c_str(), i, got[i], first[i]);
              ok = false;
              break;
            }
        }
      }
#if NCC_HAVE_NPP
      {
        ncc::npp_baseline npp(p2);
        auto t = course::bench::time_device([&](cudaStream_t stream) { npp.run(c2.get(), stream); }, s, 2, int(opt.repeats));
        sweep.add_row({double(size), std::string("NPP"), 1000 * t.median_ms, tp2 / (t.median_ms * 1e6)});
      }
#endif
    }
    sweep.set_plot(R"({"kind": "lines", "x": "template", "y": "Gtpix/s", "series": "series", "logy": true})");
    sweep.print();
    rep.add(sweep);

    // --- Part 3: a bank of templates ------------------------------------------------------------
    const int bank_size = int(opt.bank_template);
    if (opt.bank > 0 && bank_size <= W && bank_size <= H)
      ok = bank_table(rep, sc, int(opt.bank), bank_size, best_single, int(opt.repeats), s) && ok;
    return ok;
  });
}
