// SPDX-License-Identifier: BSD-3-Clause
// A deterministic test scene in place of the book's coins.pgm (not ours to ship): a textured
// background, coins of several sizes and textures, and copies of the template ("the coin we look
// for") planted at known positions, some under other lighting (I' = gain * I + offset). The
// template's pixels stay within 40..200 so every relit copy is exact up to rounding, with no
// clipping: its coefficient is 1 up to that rounding (> 0.999), whatever the gain (amplitude
// independence of the normalized correlation).
#pragma once

#include "common/pgm.h"
#include "common/random.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace ncc {

struct planted {
  int x = 0, y = 0;             // top left corner of the copy (= the output offset that matches)
  double gain = 1, offset = 0;  // lighting: pixel = round(gain * template + offset)
};

struct scene {
  course::gray_image image, templ;
  std::vector<planted> instances;
};

namespace scene_detail {

// A coin in a w x h box: an ellipse with a rim, rings and a relief pattern of kind `texture`,
// over background pixels; values in 40..200.
inline void draw_coin(course::gray_image &img, int x0, int y0, int w, int h, int texture,
                      std::uint64_t seed) {
  const double cx = (w - 1) / 2.0, cy = (h - 1) / 2.0, rx = std::max(1.0, w / 2.0 - 0.5),
               ry = std::max(1.0, h / 2.0 - 0.5);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const double dx = (x - cx) / rx, dy = (y - cy) / ry, r = std::sqrt(dx * dx + dy * dy);
      if (r > 1.0) continue;
      double v;
      const double ang = std::atan2(dy, dx);
      switch (texture % 4) {
        case 0: v = 150 + 40 * std::cos(r * 12.0) + (r > 0.85 ? 30 : 0); break;  // rings and rim
        case 1: v = 120 + 60 * dx - 30 * dy + (r > 0.8 ? -40 : 0); break;  // lit from one side
        case 2:
          v = 140 + 45 * std::sin(ang * 5.0) * (1 - r) + (r > 0.85 ? 35 : 0);
          break;  // star relief
        default:
          v = 100 + 50 * std::cos(dx * 9.0) * std::cos(dy * 7.0) + (r > 0.9 ? 50 : 0);
          break;  // checker
      }
      v += double(course::random_int(seed, std::uint64_t(y) * std::uint64_t(w) + std::uint64_t(x),
                                     -12, 12));
      img.at(x0 + x, y0 + y) = std::uint8_t(std::clamp(v, 40.0, 200.0));
    }
}

}  // namespace scene_detail

// A width x height scene with a tw x th template, seeded. Instances are planted on a grid of
// cells (the template plus a margin); four of them (fewer if the image has fewer cells) are
// copies of the template, lit as (1, 0), (0.6, +40), (1.2, -20), (0.5, +90); the other cells hold
// coins of other sizes and textures.
inline scene make_scene(int width, int height, int tw, int th, std::uint64_t seed = 15) {
  scene s;
  s.image = course::gray_image(width, height);
  // Background: a gentle gradient with noise (no flat windows), values 60..130.
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const double g = 80 + 30.0 * x / std::max(1, width) + 15.0 * y / std::max(1, height);
      const int noise = course::random_int(
          seed, std::uint64_t(y) * std::uint64_t(width) + std::uint64_t(x), -8, 8);
      s.image.at(x, y) = std::uint8_t(std::clamp(g + noise, 0.0, 255.0));
    }
  // The template: a textured coin over background-like pixels.
  s.templ = course::gray_image(tw, th);
  for (int y = 0; y < th; ++y)
    for (int x = 0; x < tw; ++x)
      s.templ.at(x, y) = std::uint8_t(
          90 + course::random_int(seed + 1, std::uint64_t(y) * std::uint64_t(tw) + std::uint64_t(x),
                                  -10, 10));
  scene_detail::draw_coin(s.templ, 0, 0, tw, th, 0, seed + 2);

  const int cw = tw + 6, ch = th + 6;
  const int cols = width / cw, rows = height / ch;
  std::vector<int> cells(std::size_t(std::max(0, cols * rows)));
  for (std::size_t i = 0; i < cells.size(); ++i) cells[i] = int(i);
  for (std::size_t i = cells.size(); i > 1; --i)  // a seeded shuffle
    std::swap(cells[i - 1], cells[course::random_bits(seed + 3, i) % i]);
  const planted lights[] = {{0, 0, 1.0, 0}, {0, 0, 0.6, 40}, {0, 0, 1.2, -20}, {0, 0, 0.5, 90}};
  for (std::size_t c = 0; c < cells.size(); ++c) {
    const int x0 = (cells[c] % cols) * cw + 3, y0 = (cells[c] / cols) * ch + 3;
    if (c < 4) {
      planted p = lights[c];
      p.x = x0, p.y = y0;
      for (int y = 0; y < th; ++y)
        for (int x = 0; x < tw; ++x)
          s.image.at(x0 + x, y0 + y) =
              std::uint8_t(std::lround(p.gain * s.templ.at(x, y) + p.offset));
      s.instances.push_back(p);
    } else {
      // Another coin: smaller or of another texture, somewhere in its cell.
      const int kind = int(course::random_bits(seed + 4, c) % 6);
      const int w = std::max(3, tw * (60 + int(course::random_bits(seed + 5, c) % 40)) / 100);
      const int h = std::max(3, th * (60 + int(course::random_bits(seed + 6, c) % 40)) / 100);
      scene_detail::draw_coin(s.image, x0 + (tw - w) / 2, y0 + (th - h) / 2, w, h, 1 + kind % 3,
                              seed + 7 + c);
    }
  }
  return s;
}

}  // namespace ncc
