// SPDX-License-Identifier: BSD-3-Clause
// The speed verdict's workload for chapter 15 (harness/judge.h): the normalized cross-correlation
// of an image of random bytes with a template of random bytes (a fresh seed per run), computed by
// the one stage linked in, on the device, timed by events:
//  - a single-template stage (01..09): ncc::problem, one template, the coefficients (or the sums);
//  - the bank stage (10): ncc::bank_problem, k templates of one size in one call (its lesson).
// The image and the template(s) reach the device, and whatever a stage derives from them (constant
// memory, shifted templates, FFTs, packed B fragments) is made, before the timing: the first call,
// untimed, does it once, as for a stage called again with the same problem.
// Parameters (key=value; lessons.toml picks each stage's):
//   width, height   the image (default: lessons.toml's [workload], 1024 x 1024)
//   tw, th          the template (default: the [workload]'s, 16 x 16; th defaults to tw when tw
//                   is given)
//   k               the bank stage: templates in the bank (default 32)
//   sums            1: the three sums instead of the coefficients (default 0, as the benchmark)
//   seed            the pixels' seed (default: a fresh one)
#include "ncc.h"

#include "common/check.h"
#include "common/memory.h"
#include "common/pgm.h"
#include "common/random.h"
#include "common/random_fill.h"
#include "harness/judge.h"

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

using course::judge::params;
using course::judge::workload;

namespace {

course::gray_image random_image(int w, int h, std::uint64_t seed) {
  course::gray_image img(w, h);
  for (std::size_t i = 0; i < img.pixels.size(); ++i)
    img.pixels[i] = std::uint8_t(course::random_int(seed, i, 0, 255));
  return img;
}

struct shape {
  int width, height, tw, th;
  bool sums;
  std::uint64_t seed;
};

shape read_shape(const params &p) {
  shape s;
  s.width = int(p.integer("width", COURSE_WORKLOAD_WIDTH));
  s.height = int(p.integer("height", COURSE_WORKLOAD_HEIGHT));
  s.tw = int(p.integer("tw", COURSE_WORKLOAD_TW));
  s.th = int(p.integer("th", p.has("tw") ? s.tw : COURSE_WORKLOAD_TH));
  s.sums = p.integer("sums", 0) != 0;
  s.seed = std::uint64_t(p.integer("seed", std::int64_t(course::fresh_seed() >> 1)));
  if (s.width < 1 || s.height < 1 || s.tw < 1 || s.th < 1)
    throw std::invalid_argument("width, height, tw and th must be >= 1");
  return s;
}

std::string size_text(int w, int h) { return std::to_string(w) + "x" + std::to_string(h); }

// "1024x1024 image, 16x16 template, coefficients": the shape, and the fallback if the stage took
// it.
std::string describe(const shape &s, const std::string &templates, ncc::path taken) {
  std::string d = size_text(s.width, s.height) + " image, " + templates + ", " +
                  (s.sums ? "sums" : "coefficients");
  if (taken != ncc::path::own) d += " (" + std::string(ncc::to_string(taken)) + ")";
  return d;
}

workload single_workload(const ncc::stage &st, const params &p) {
  const shape s = read_shape(p);
  struct state {
    ncc::problem problem;
    course::device_buffer<float> coef;
    course::device_buffer<int> sum_i, sum_isq, sum_it;
    ncc::output out;
    state(const course::gray_image &image, const course::gray_image &templ, bool sums)
        : problem(image, templ) {
      const std::size_t n = problem.outputs();
      if (sums) {
        sum_i = course::device_buffer<int>(n), sum_isq = course::device_buffer<int>(n),
        sum_it = course::device_buffer<int>(n);
        out.sum_i = sum_i.get(), out.sum_isq = sum_isq.get(), out.sum_it = sum_it.get();
      } else {
        coef = course::device_buffer<float>(n);
        out.coef = coef.get();
      }
    }
  };
  auto a = std::make_shared<state>(random_image(s.width, s.height, s.seed),
                                   random_image(s.tw, s.th, s.seed + 1), s.sums);
  const ncc::path taken = st.run(a->problem, a->out, nullptr);  // the stage's own set-up, untimed
  CUDA_CHECK(cudaDeviceSynchronize());
  workload w;
  w.description = describe(s, size_text(s.tw, s.th) + " template", taken);
  w.call = [&st, a](cudaStream_t stream) { st.run(a->problem, a->out, stream); };
  w.keep = a;
  return w;
}

workload bank_workload(const ncc::bank_stage &st, const params &p) {
  const shape s = read_shape(p);
  const int k = int(p.integer("k", 32));
  if (k < 1)
    throw std::invalid_argument("k=" + std::to_string(k) + ": a bank holds at least one template");
  std::vector<course::gray_image> templates;
  for (int i = 0; i < k; ++i)
    templates.push_back(random_image(s.tw, s.th, s.seed + 1 + std::uint64_t(i)));
  struct state {
    ncc::bank_problem bank;
    course::device_buffer<float> coef;
    course::device_buffer<int> sum_i, sum_isq, sum_it;
    ncc::bank_output out;
    state(const course::gray_image &image, std::vector<course::gray_image> t, bool sums)
        : bank(image, std::move(t)) {
      const std::size_t plane = bank.outputs(), all = plane * std::size_t(bank.count());
      if (sums) {
        sum_i = course::device_buffer<int>(plane), sum_isq = course::device_buffer<int>(plane);
        sum_it = course::device_buffer<int>(all);
        out.sum_i = sum_i.get(), out.sum_isq = sum_isq.get(), out.sum_it = sum_it.get();
      } else {
        coef = course::device_buffer<float>(all);
        out.coef = coef.get();
      }
    }
  };
  auto a = std::make_shared<state>(random_image(s.width, s.height, s.seed), std::move(templates),
                                   s.sums);
  const ncc::path taken = st.run(a->bank, a->out, nullptr);  // the bank packed once, untimed
  CUDA_CHECK(cudaDeviceSynchronize());
  workload w;
  w.description = describe(
      s, "a bank of " + std::to_string(k) + " templates of " + size_text(s.tw, s.th), taken);
  w.call = [&st, a](cudaStream_t stream) { st.run(a->bank, a->out, stream); };
  w.keep = a;
  return w;
}

}  // namespace

workload course::judge::make_workload(const params &p) {
  // Stage 10 registers both forms; its lesson is the bank.
  if (const auto *st = linked_stage<ncc::bank_stage>()) return bank_workload(*st, p);
  if (const auto *st = linked_stage<ncc::stage>()) return single_workload(*st, p);
  throw std::logic_error("no chapter-15 stage is linked into this judge program");
}
