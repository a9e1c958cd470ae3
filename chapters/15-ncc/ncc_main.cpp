// SPDX-License-Identifier: BSD-3-Clause
// The chapter's program, after the book's normalizedCrossCorrelation.cu (15.6): correlates a
// template cut from the image with the whole image, with every stage, and reports each stage's
// rate; prints the 9x9 neighbourhood of coefficients around the best match; optionally writes
// the coefficients as a PGM image (log-scaled, so weak responses stay visible).
//
//   ncc [--image FILE] [--padWidth W --padHeight H] [--xTemplate X --yTemplate Y]
//       [--wTemplate W --hTemplate H] [--iterations N] [--output FILE] [--stage ID]
//
// Without --image it uses the generated scene (chapters/15-ncc/scene.h) and, by default, a
// template around the first planted coin. --padWidth/--padHeight enlarge the image (random
// pixels past the original, as the book pads for timing).
#include "host_ncc.h"
#include "ncc.h"
#include "scene.h"

#include "common/cli.h"
#include "common/device.h"
#include "common/pgm.h"
#include "common/random.h"
#include "common/timer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

int main(int argc, char **argv) {
  std::string image_file, output_file, only;
  std::int64_t pad_w = 0, pad_h = 0, x_t = -1, y_t = -1, w_t = 52, h_t = 52, iterations = 100;
  course::options cli(
      "ncc", "Chapter 15: normalized cross-correlation of a template with an image, every stage.");
  cli.add("image", image_file, "8-bit PGM image (default: the generated scene)")
      .add("padWidth", pad_w, 0, 16384, "pad the image to this width (0: no padding)")
      .add("padHeight", pad_h, 0, 16384, "pad the image to this height (0: no padding)")
      .add("xTemplate", x_t, -1, 16383,
           "template's left column in the image (-1: the default coin)")
      .add("yTemplate", y_t, -1, 16383, "template's top row in the image (-1: the default coin)")
      .add("wTemplate", w_t, 1, 16384, "template width")
      .add("hTemplate", h_t, 1, 16384, "template height")
      .add("iterations", iterations, 1, 100000, "timed calls per stage")
      .add("output", output_file, "write the coefficients as a log-scaled PGM image")
      .add("stage", only, "run only the stage whose id starts with this");
  cli.parse(argc, argv);
  try {
    course::gray_image image;
    int tx = int(x_t), ty = int(y_t);
    if (image_file.empty()) {
      const ncc::scene s = ncc::make_scene(300, 246, int(w_t), int(h_t));
      image = s.image;
      if (tx < 0 && !s.instances.empty()) tx = s.instances.front().x, ty = s.instances.front().y;
    } else {
      image = course::read_pgm(image_file);
      if (tx < 0) tx = (image.width - int(w_t)) / 2, ty = (image.height - int(h_t)) / 2;
    }
    const std::string source = image_file.empty() ? std::string("the generated scene") : image_file;
    if (ty < 0) ty = 0;
    if (tx < 0) tx = 0;
    if (w_t > image.width || h_t > image.height || tx + w_t > image.width ||
        ty + h_t > image.height) {
      std::fprintf(
          stderr, "ncc: %s: the %lldx%lld template at (%d,%d) does not fit in the %dx%d image\n",
          source.c_str(), (long long)w_t, (long long)h_t, tx, ty, image.width, image.height);
      return 2;
    }
    const course::gray_image templ = image.crop(tx, ty, int(w_t), int(h_t));
    if (pad_w > image.width || pad_h > image.height) {
      course::gray_image padded(std::max<int>(image.width, int(pad_w)),
                                std::max<int>(image.height, int(pad_h)));
      for (int y = 0; y < padded.height; ++y)
        for (int x = 0; x < padded.width; ++x)
          padded.at(x, y) = (x < image.width && y < image.height)
                                ? image.at(x, y)
                                : std::uint8_t(course::random_int(
                                      42, std::uint64_t(y) * padded.width + x, 0, 255));
      image = std::move(padded);
    }
    const course::gpu_status gpu = course::probe_gpu();
    if (!gpu.usable) {
      // Exit 77: cannot run here (CTest's SKIP_RETURN_CODE reports the program test as skipped).
      std::fprintf(
          stderr,
          "ncc: every stage of chapter 15 runs on a GPU, and this machine has none usable (%s). Without "
          "one, make check STAGE=host/15-ncc tests the host references and the scene generator.\n",
          gpu.reason.c_str());
      return 77;
    }
    ncc::problem p(image, templ);
    const ncc::view &v = p.v();
    std::printf("%s: %dx%d image, %dx%d template at (%d,%d), %dx%d coefficients\n", source.c_str(),
                image.width, image.height, v.tw, v.th, tx, ty, v.out_w(), v.out_h());
    course::device_buffer<float> d(p.outputs());
    std::vector<float> coef(p.outputs());
    bool have = false;
    course::stream s;
    course::event start, stop;
    for (const auto &stage : course::registered<ncc::stage>()) {
      if (!only.empty() && stage.info.id.rfind(only, 0) != 0) continue;
      if (stage.info.todo) {
        std::printf("%-22s TODO: not yet implemented\n", stage.info.id.c_str());
        continue;
      }
      ncc::output out;
      out.coef = d.get();
      ncc::path taken = stage.run(p, out, s);
      CUDA_CHECK(cudaEventRecord(start, s));
      for (std::int64_t i = 0; i < iterations; ++i) taken = stage.run(p, out, s);
      CUDA_CHECK(cudaEventRecord(stop, s));
      const double ms = course::elapsed_ms(start, stop) / double(iterations);
      std::printf("%-22s %10.2f Mpix/s %10.2f Gtpix/s%s\n", stage.info.id.c_str(),
                  p.outputs() / (ms * 1e3), double(p.outputs()) * v.tw * v.th / (ms * 1e6),
                  taken == ncc::path::own ? "" : "  (texture-texture fallback)");
      if (!have)
        CUDA_CHECK(
            cudaMemcpy(coef.data(), d.get(), coef.size() * sizeof(float), cudaMemcpyDeviceToHost));
      have = true;
    }
    if (!have) {
      std::fprintf(stderr, "ncc: no stage ran (--stage %s)\n", only.c_str());
      return 2;
    }
    // The best match and its neighbourhood (the template's own position gives 1.00).
    const std::size_t best = std::size_t(std::max_element(coef.begin(), coef.end()) - coef.begin());
    const int bx = int(best % std::size_t(v.out_w())), by = int(best / std::size_t(v.out_w()));
    std::printf("best match at (%d,%d), coefficient %.4f; the neighbourhood:\n", bx, by,
                coef[best]);
    for (int y = by - 4; y <= by + 4; ++y) {
      for (int x = bx - 4; x <= bx + 4; ++x) {
        if (x < 0 || y < 0 || x >= v.out_w() || y >= v.out_h()) std::printf("   -- ");
        else std::printf("%5.2f ", coef[std::size_t(y) * std::size_t(v.out_w()) + std::size_t(x)]);
      }
      std::printf("\n");
    }
    if (!output_file.empty()) {
      // log scale: 0 -> 0, 1 -> 255, small positive values lifted; negative values black.
      course::gray_image img(v.out_w(), v.out_h());
      for (std::size_t i = 0; i < coef.size(); ++i) {
        const double c = std::clamp(double(coef[i]), 0.0, 1.0);
        img.pixels[i] = std::uint8_t(std::lround(255.0 * std::log1p(255.0 * c) / std::log(256.0)));
      }
      course::write_pgm(output_file, img);
      std::printf("wrote %s\n", output_file.c_str());
    }
    // The program checks itself: the template's own position must match (coefficient ~1).
    const float self = coef[std::size_t(ty) * std::size_t(v.out_w()) + std::size_t(tx)];
    const ncc::template_stats st = p.stats();
    if (st.denom() > 0 && !(self > 0.999f)) {
      std::fprintf(stderr,
                   "ncc: WRONG RESULT: the template's own position (%d,%d) has coefficient %f\n",
                   tx, ty, self);
      return 1;
    }
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "ncc: %s\n", e.what());
    return 2;
  }
}
