// SPDX-License-Identifier: BSD-3-Clause
// 8-bit grayscale images and the PGM format (netpbm P5 binary and P2 plain text).
//
// The reader accepts any maxval 1..255 (values are rescaled to 0..255, so a maxval-15 image
// looks like a maxval-255 one) and comments (# to the end of the line) anywhere in the header.
// It rejects, with a std::runtime_error whose one-line message starts with the file's name:
// a bad magic, a truncated header or pixel block, zero or huge dimensions (over 32768 on a side
// or 2^28 pixels), a maxval of 0 or over 255, a pixel over maxval, a number that is not one.
// It never reads past its input and never allocates more than the header's (bounded) size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace course {

struct gray_image {
  int width = 0, height = 0;
  std::vector<std::uint8_t> pixels;  // row-major, width * height

  gray_image() = default;
  gray_image(int w, int h, std::uint8_t fill = 0)
      : width(w), height(h), pixels(std::size_t(w) * std::size_t(h), fill) {}
  std::uint8_t &at(int x, int y) {
    return pixels[std::size_t(y) * std::size_t(width) + std::size_t(x)];
  }
  std::uint8_t at(int x, int y) const {
    return pixels[std::size_t(y) * std::size_t(width) + std::size_t(x)];
  }
  // The w x h rectangle whose top left corner is (x, y); throws if it does not lie inside.
  gray_image crop(int x, int y, int w, int h) const;
};

constexpr int pgm_max_side = 32768;
constexpr std::int64_t pgm_max_pixels = std::int64_t(1) << 28;

// Parses the bytes of a PGM file; `name` is used in error messages.
gray_image parse_pgm(const std::string &bytes, const std::string &name);
// Reads a PGM file (errors name the file, e.g. "coins.pgm: truncated pixel data (12 of 300 rows)";
// a directory, a missing file and an unreadable one each say which: "photos: is a directory, not
// a PGM file", "none.pgm: no such file", "locked.pgm: cannot open for reading (Permission
// denied)").
gray_image read_pgm(const std::string &path);
// The bytes of a PGM file, P5 (binary) or P2 (plain), maxval 255.
std::string format_pgm(const gray_image &img, bool binary = true);
// Writes a PGM file; throws std::runtime_error naming the file if it cannot.
void write_pgm(const std::string &path, const gray_image &img, bool binary = true);

}  // namespace course
