// SPDX-License-Identifier: BSD-3-Clause
// Chapter 15, normalized cross-correlation: what every stage implements, so one test file and one
// benchmark cover them all.
//
// For an image I (W x H) and a template T (w x h, N = w*h pixels) every stage computes, for each
// "valid" offset (x, y), 0 <= x <= W-w, 0 <= y <= H-h (the output is (W-w+1) x (H-h+1), the
// layout of NPP's CrossCorrValid), the three sums over the window
//     SumI = sum I,  SumISq = sum I^2,  SumIT = sum I*T      (I at (x+i, y+j), T at (i, j))
// and from them and the template's SumT, SumTSq (15.1) the coefficient
//     (N SumIT - SumI SumT) / sqrt((N SumISq - SumI^2) (N SumTSq - SumT^2))   in [-1, 1].
// A window or template of zero variance (flat) has no defined correlation: its coefficient is 0.
// As the book advises (15.6), each stage has two entry modes: one writes the sums (compared
// bit for bit with the host), one the coefficients (compared within an epsilon).
// Templates of up to 32768 pixels: SumISq and SumIT of 8-bit pixels then fit in 31 bits.
// A stage may also have the bank form (stage 10): K templates of one size against one image in
// one call, K planes of results (bank_problem, bank_output, bank_stage below).
#pragma once

#include "common/check.h"
#include "common/memory.h"
#include "common/pgm.h"
#include "common/stage.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#ifdef __CUDACC__
#define NCC_HD __host__ __device__
#else
#define NCC_HD
#endif

namespace ncc {

constexpr int max_template_pixels = 32768;
// Stages 02..06 keep the template in __constant__ memory, as bytes; larger ones fall back.
constexpr int constant_template_bytes = 16384;
// Stages 03..06: the image tile in shared memory is (tile_w + w - 1) x (tile_h + h - 1) bytes.
constexpr int tile_w = 32, tile_h = 8;
constexpr int shared_tile_limit = 48 * 1024;

// The template's statistics, computed once per template on the host (15.3).
struct template_stats {
  std::int64_t n = 0, sum = 0, sum_sq = 0;
  std::int64_t denom() const { return n * sum_sq - sum * sum; }  // exact: N SumTSq - SumT^2
};
inline template_stats stats_of(const course::gray_image &t) {
  template_stats s;
  s.n = std::int64_t(t.pixels.size());
  for (auto p : t.pixels) s.sum += p, s.sum_sq += std::int64_t(p) * p;
  return s;
}

// What the kernels receive (by value).
struct view {
  const std::uint8_t *image = nullptr;  // row pitch `pitch`; each row readable up to width + 8
                                        // bytes (zeros past width)
  std::size_t pitch = 0;
  int width = 0, height = 0;
  const std::uint8_t *templ = nullptr;  // row pitch `tpitch`
  std::size_t tpitch = 0;
  int tw = 0, th = 0;
  cudaTextureObject_t tex_image = 0, tex_template = 0;  // point sampling, clamped, unnormalised
  int n = 0, sum_t = 0;                                 // N and SumT
  float denom_t = 0;                                    // N SumTSq - SumT^2, rounded to float
  NCC_HD int out_w() const { return width - tw + 1; }
  NCC_HD int out_h() const { return height - th + 1; }
};

// Where a call writes: the coefficients, or the three sums (each out_w x out_h, dense rows).
struct output {
  float *coef = nullptr;
  int *sum_i = nullptr, *sum_isq = nullptr, *sum_it = nullptr;
  NCC_HD bool sums() const { return coef == nullptr; }
};

// The device copies of one image and one template, with their textures. Stages keep what they
// derive from the template (constant memory, FFTs) keyed by id(), so repeated calls do not redo it.
class problem {
 public:
  problem(const course::gray_image &image, const course::gray_image &templ)
      : host_template_(templ) {
    if (templ.width <= 0 || templ.height <= 0 || image.width <= 0 || image.height <= 0)
      throw std::invalid_argument("empty image or template");
    if (templ.width > image.width || templ.height > image.height)
      throw std::invalid_argument("the template (" + std::to_string(templ.width) + "x" +
                                  std::to_string(templ.height) + ") is larger than the image (" +
                                  std::to_string(image.width) + "x" + std::to_string(image.height) +
                                  ")");
    if (std::int64_t(templ.width) * templ.height > max_template_pixels)
      throw std::invalid_argument("templates of at most " + std::to_string(max_template_pixels) +
                                  " pixels, not " + std::to_string(templ.width) + "x" +
                                  std::to_string(templ.height));
    static std::uint64_t next_id = 0;
    id_ = ++next_id;
    stats_ = stats_of(templ);
    // Rows padded by >= 8 zero bytes: the packed-byte stage reads whole words past the last column.
    v_.width = image.width, v_.height = image.height, v_.tw = templ.width, v_.th = templ.height;
    v_.pitch = (std::size_t(image.width) + 8 + 127) / 128 * 128;
    v_.tpitch = (std::size_t(templ.width) + 127) / 128 * 128;
    image_ = course::device_buffer<std::uint8_t>(v_.pitch * std::size_t(image.height));
    templ_ = course::device_buffer<std::uint8_t>(v_.tpitch * std::size_t(templ.height));
    CUDA_CHECK(cudaMemset(image_.get(), 0, image_.bytes()));
    CUDA_CHECK(cudaMemset(templ_.get(), 0, templ_.bytes()));
    CUDA_CHECK(cudaMemcpy2D(image_.get(), v_.pitch, image.pixels.data(), std::size_t(image.width),
                            std::size_t(image.width), std::size_t(image.height),
                            cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy2D(templ_.get(), v_.tpitch, templ.pixels.data(), std::size_t(templ.width),
                            std::size_t(templ.width), std::size_t(templ.height),
                            cudaMemcpyHostToDevice));
    v_.image = image_.get(), v_.templ = templ_.get();
    v_.tex_image = make_texture(image_.get(), v_.pitch, image.width, image.height);
    v_.tex_template = make_texture(templ_.get(), v_.tpitch, templ.width, templ.height);
    v_.n = int(stats_.n), v_.sum_t = int(stats_.sum), v_.denom_t = float(stats_.denom());
    // The copies above run on the legacy default stream, and a copy from pageable memory may
    // return before its DMA lands: wait, so that work on any stream (non-blocking ones too) sees
    // the image and template.
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  ~problem() {
    caches_.clear();
    if (v_.tex_image) cudaDestroyTextureObject(v_.tex_image);
    if (v_.tex_template) cudaDestroyTextureObject(v_.tex_template);
  }
  problem(const problem &) = delete;
  problem &operator=(const problem &) = delete;

  const view &v() const { return v_; }
  std::uint64_t id() const { return id_; }
  const course::gray_image &host_template() const { return host_template_; }
  const template_stats &stats() const { return stats_; }
  std::size_t outputs() const { return std::size_t(v_.out_w()) * std::size_t(v_.out_h()); }

  // Per-stage derived state (constant-memory copies, FFT plans), created on first use.
  template <class T>
  T &cache(const std::string &key) const {
    auto &slot = caches_[key];
    if (!slot) slot = std::make_shared<T>(*this);
    return *static_cast<T *>(slot.get());
  }

 private:
  static cudaTextureObject_t make_texture(std::uint8_t *p, std::size_t pitch, int w, int h) {
    cudaResourceDesc res{};
    res.resType = cudaResourceTypePitch2D;
    res.res.pitch2D.devPtr = p;
    res.res.pitch2D.desc = cudaCreateChannelDesc<unsigned char>();
    res.res.pitch2D.width = std::size_t(w);
    res.res.pitch2D.height = std::size_t(h);
    res.res.pitch2D.pitchInBytes = pitch;
    cudaTextureDesc tex{};
    tex.addressMode[0] = tex.addressMode[1] = cudaAddressModeClamp;
    tex.filterMode = cudaFilterModePoint;
    tex.readMode = cudaReadModeElementType;
    tex.normalizedCoords = 0;
    cudaTextureObject_t t = 0;
    CUDA_CHECK(cudaCreateTextureObject(&t, &res, &tex, nullptr));
    return t;
  }
  course::gray_image host_template_;
  template_stats stats_;
  course::device_buffer<std::uint8_t> image_, templ_;
  view v_;
  std::uint64_t id_ = 0;
  mutable std::map<std::string, std::shared_ptr<void>> caches_;
};

// Which kernel a call ran: its own, or (like the book's host code) the texture-texture kernel
// because the template or the image tile does not fit where the stage wants to keep it.
enum class path { own, tex_tex_fallback };
// Off everywhere but in the chapter bench, which turns it on around single calls with
// --generic-at-compiled-sizes: stages 07 and 08 then run their generic instance even at a template
// size they compile in (dp4a.cuh's launch_by_size), so the generic path is timed, and its goal
// judged, on the generic kernel at those sizes too.
inline bool generic_at_compiled_sizes = false;

inline const char *to_string(path p) {
  return p == path::own ? "own kernel" : "texture-texture fallback";
}

// Enqueues the work on `stream`; the output buffers are out_w * out_h elements.
using run_fn = path (*)(const problem &p, const output &out, cudaStream_t stream);

struct stage {
  course::stage_info info;
  run_fn run;
};

// --- a bank of templates (stage 10) ---------------------------------------------------------
// K templates of one size (w x h), correlated with one image in one call. Every template gets
// what the single-template entry gives one: K planes of out_w x out_h coefficients, or the sums.
class bank_problem {
 public:
  bank_problem(const course::gray_image &image, std::vector<course::gray_image> templates)
      : host_image_(image), templates_(std::move(templates)), image_(image, first_of(templates_)) {
    for (const auto &t : templates_) {
      if (t.width != templates_[0].width || t.height != templates_[0].height)
        throw std::invalid_argument(
            "a bank holds templates of one size: " + std::to_string(t.width) + "x" +
            std::to_string(t.height) + " beside " + std::to_string(templates_[0].width) + "x" +
            std::to_string(templates_[0].height));
      stats_.push_back(stats_of(t));
    }
    static std::uint64_t next_id = 0;
    id_ = ++next_id;
  }
  bank_problem(const bank_problem &) = delete;
  bank_problem &operator=(const bank_problem &) = delete;
  ~bank_problem() { caches_.clear(); }

  // The image on the device (with the first template, so that v() has the template's size).
  const problem &image() const { return image_; }
  const view &v() const { return image_.v(); }
  int count() const { return int(templates_.size()); }
  const course::gray_image &host_image() const { return host_image_; }
  const std::vector<course::gray_image> &templates() const { return templates_; }
  const template_stats &stats(int k) const { return stats_[std::size_t(k)]; }
  std::uint64_t id() const { return id_; }
  std::size_t outputs() const { return image_.outputs(); }  // per template

  template <class T>
  T &cache(const std::string &key) const {
    auto &slot = caches_[key];
    if (!slot) slot = std::make_shared<T>(*this);
    return *static_cast<T *>(slot.get());
  }

 private:
  static const course::gray_image &first_of(const std::vector<course::gray_image> &t) {
    if (t.empty()) throw std::invalid_argument("a bank of no templates");
    return t.front();
  }
  course::gray_image host_image_;
  std::vector<course::gray_image> templates_;
  problem image_;
  std::vector<template_stats> stats_;
  std::uint64_t id_ = 0;
  mutable std::map<std::string, std::shared_ptr<void>> caches_;
};

// Where a bank call writes. Coefficients: K planes of out_w x out_h, template k's starting at
// coef + k * outputs(). Sums: SumI and SumISq once (they do not depend on the template), SumIT
// in K planes.
struct bank_output {
  float *coef = nullptr;
  int *sum_i = nullptr, *sum_isq = nullptr, *sum_it = nullptr;
  NCC_HD bool sums() const { return coef == nullptr; }
};

using bank_fn = path (*)(const bank_problem &b, const bank_output &out, cudaStream_t stream);

// A stage that also has the bank form registers it here (stage 10); the others do not.
struct bank_stage {
  course::stage_info info;
  bank_fn run;
};
struct bank_registrar {
  explicit bank_registrar(bank_stage s) {
    course::registered<bank_stage>().push_back(std::move(s));
  }
};

}  // namespace ncc

// NCC_STAGE("title (15.2)", run);  registers the stage compiled in this file (its id is the build's
// COURSE_STAGE_ID); NCC_BANK_STAGE the same for a stage that also correlates a bank of templates.
#define NCC_STAGE(title, ...)                                                       \
  static course::registrar<ncc::stage> COURSE_CONCAT(course_registrar_, __LINE__) { \
    ncc::stage { COURSE_THIS_STAGE(title), __VA_ARGS__ }                            \
  }
#define NCC_BANK_STAGE(title, ...)                                          \
  static ncc::bank_registrar COURSE_CONCAT(ncc_bank_registrar_, __LINE__) { \
    ncc::bank_stage { COURSE_THIS_STAGE(title), __VA_ARGS__ }               \
  }
