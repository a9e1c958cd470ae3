// SPDX-License-Identifier: BSD-3-Clause
// The host references: the three sums of every window exactly (64-bit integers), and the
// coefficients in double precision from them, with the same rule for flat windows (0).
#pragma once

#include "ncc.h"

#include "common/parallel.h"
#include "common/pgm.h"

#include <cmath>
#include <cstdint>
#include <vector>

namespace ncc {

struct host_sums {
  int out_w = 0, out_h = 0;
  std::vector<std::int64_t> sum_i, sum_isq, sum_it;
};

inline host_sums host_reference_sums(const course::gray_image &img, const course::gray_image &t) {
  host_sums s;
  s.out_w = img.width - t.width + 1, s.out_h = img.height - t.height + 1;
  const std::size_t n = std::size_t(s.out_w) * std::size_t(s.out_h);
  s.sum_i.assign(n, 0), s.sum_isq.assign(n, 0), s.sum_it.assign(n, 0);
  course::parallel_for(std::size_t(s.out_h), [&](std::size_t b, std::size_t e, unsigned) {
    for (std::size_t y = b; y < e; ++y)
      for (int x = 0; x < s.out_w; ++x) {
        std::int64_t si = 0, sisq = 0, sit = 0;
        for (int j = 0; j < t.height; ++j) {
          const std::uint8_t *row =
              &img.pixels[(y + std::size_t(j)) * std::size_t(img.width) + std::size_t(x)];
          const std::uint8_t *trow = &t.pixels[std::size_t(j) * std::size_t(t.width)];
          for (int i = 0; i < t.width; ++i) {
            const std::int64_t I = row[i];
            si += I, sisq += I * I, sit += I * trow[i];
          }
        }
        const std::size_t at = y * std::size_t(s.out_w) + std::size_t(x);
        s.sum_i[at] = si, s.sum_isq[at] = sisq, s.sum_it[at] = sit;
      }
  });
  return s;
}

inline double host_coefficient(std::int64_t n, std::int64_t si, std::int64_t sisq, std::int64_t sit,
                               const template_stats &t) {
  const double num = double(n * sit - si * t.sum);
  const std::int64_t var_i = n * sisq - si * si, var_t = t.denom();
  if (var_i <= 0 || var_t <= 0) return 0.0;
  return num / std::sqrt(double(var_i) * double(var_t));
}

inline std::vector<double> host_coefficients(const host_sums &s, const template_stats &t) {
  std::vector<double> c(s.sum_i.size());
  for (std::size_t k = 0; k < c.size(); ++k)
    c[k] = host_coefficient(t.n, s.sum_i[k], s.sum_isq[k], s.sum_it[k], t);
  return c;
}

}  // namespace ncc
