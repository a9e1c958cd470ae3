// SPDX-License-Identifier: BSD-3-Clause
#include "common/pgm.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace course {

gray_image gray_image::crop(int x, int y, int w, int h) const {
  if (x < 0 || y < 0 || w <= 0 || h <= 0 || std::int64_t(x) + w > width ||
      std::int64_t(y) + h > height)
    throw std::runtime_error("rectangle " + std::to_string(w) + "x" + std::to_string(h) + " at (" +
                             std::to_string(x) + "," + std::to_string(y) +
                             ") does not lie inside the " + std::to_string(width) + "x" +
                             std::to_string(height) + " image");
  gray_image out(w, h);
  for (int r = 0; r < h; ++r)
    for (int c = 0; c < w; ++c) out.at(c, r) = at(x + c, y + r);
  return out;
}

namespace {

class reader {
 public:
  reader(const std::string &bytes, const std::string &name) : s_(bytes), name_(name) {}
  [[noreturn]] void fail(const std::string &why) const {
    throw std::runtime_error(name_ + ": " + why);
  }

  // Skips whitespace and comments, then reads an unsigned decimal number (at most 9 digits).
  long number(const char *what) {
    for (;;) {
      while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
      if (pos_ < s_.size() && s_[pos_] == '#') {
        while (pos_ < s_.size() && s_[pos_] != '\n' && s_[pos_] != '\r') ++pos_;
        continue;
      }
      break;
    }
    if (pos_ >= s_.size()) fail(std::string("truncated header: no ") + what);
    if (!std::isdigit(static_cast<unsigned char>(s_[pos_])))
      fail(std::string("expected a number for the ") + what + ", found '" + printable(s_[pos_]) +
           "'");
    long v = 0;
    int digits = 0;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      if (++digits > 9) fail(std::string("the ") + what + " is too large");
      v = v * 10 + (s_[pos_++] - '0');
    }
    return v;
  }
  std::size_t pos() const { return pos_; }
  void advance(std::size_t n) { pos_ += n; }
  bool at_end() const { return pos_ >= s_.size(); }
  char peek() const { return s_[pos_]; }

  static std::string printable(char c) {
    if (std::isprint(static_cast<unsigned char>(c))) return std::string(1, c);
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
    return buf;
  }

 private:
  const std::string &s_;
  std::string name_;
  std::size_t pos_ = 0;
};

}  // namespace

gray_image parse_pgm(const std::string &bytes, const std::string &name) {
  reader r(bytes, name);
  if (bytes.size() < 2 || bytes[0] != 'P' || (bytes[1] != '5' && bytes[1] != '2'))
    r.fail("not a PGM file (the magic number must be P5 or P2)");
  const bool binary = bytes[1] == '5';
  r.advance(2);
  if (!r.at_end() && !std::isspace(static_cast<unsigned char>(r.peek())) && r.peek() != '#')
    r.fail("not a PGM file (the magic number must be P5 or P2)");
  const long w = r.number("width"), h = r.number("height"), maxval = r.number("maxval");
  if (w <= 0 || h <= 0)
    r.fail("zero image dimension (" + std::to_string(w) + "x" + std::to_string(h) + ")");
  if (w > pgm_max_side || h > pgm_max_side || std::int64_t(w) * h > pgm_max_pixels)
    r.fail("image dimensions too large (" + std::to_string(w) + "x" + std::to_string(h) +
           ", at most " + std::to_string(pgm_max_side) + " a side and 2^28 pixels)");
  if (maxval <= 0 || maxval > 255)
    r.fail("maxval " + std::to_string(maxval) + " is not supported (8-bit images: 1..255)");
  gray_image img{int(w), int(h)};
  const std::size_t count = img.pixels.size();
  auto scale = [&](long v) { return std::uint8_t((v * 255 + maxval / 2) / maxval); };
  if (binary) {
    // Exactly one whitespace character separates the maxval from the pixels.
    if (r.at_end() || !std::isspace(static_cast<unsigned char>(r.peek())))
      r.fail("truncated header after the maxval");
    r.advance(1);
    const std::size_t have = bytes.size() - r.pos();
    if (have < count)
      r.fail("truncated pixel data (" + std::to_string(have) + " of " + std::to_string(count) +
             " bytes)");
    for (std::size_t i = 0; i < count; ++i) {
      const long v = static_cast<unsigned char>(bytes[r.pos() + i]);
      if (v > maxval)
        r.fail("pixel " + std::to_string(i) + " is " + std::to_string(v) + ", over the maxval " +
               std::to_string(maxval));
      img.pixels[i] = scale(v);
    }
  } else {
    for (std::size_t i = 0; i < count; ++i) {
      long v;
      try {
        v = r.number("pixel value");
      } catch (const std::runtime_error &) {
        if (r.at_end())
          r.fail("truncated pixel data (" + std::to_string(i) + " of " + std::to_string(count) +
                 " values)");
        throw;
      }
      if (v > maxval)
        r.fail("pixel " + std::to_string(i) + " is " + std::to_string(v) + ", over the maxval " +
               std::to_string(maxval));
      img.pixels[i] = scale(v);
    }
  }
  return img;
}

gray_image read_pgm(const std::string &path) {
  // What the path is, first: opened as a stream, a directory "opens" on Linux and reads as one
  // huge or empty file, and a missing or unreadable file would only say "cannot open".
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (status.type() == fs::file_type::not_found) throw std::runtime_error(path + ": no such file");
  if (status.type() == fs::file_type::directory)
    throw std::runtime_error(path + ": is a directory, not a PGM file");
  if (ec) throw std::runtime_error(path + ": cannot open for reading (" + ec.message() + ")");
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int e = errno;
    throw std::runtime_error(path + ": cannot open for reading" +
                             (e ? " (" + std::string(std::strerror(e)) + ")" : ""));
  }
  // Read in chunks up to the bound, so that pipes and devices work too, and a huge file stops
  // early.
  const std::uintmax_t most = std::uintmax_t(pgm_max_pixels) * 4 + 4096;
  std::string bytes;
  if (status.type() == fs::file_type::regular) {
    const std::uintmax_t size = fs::file_size(path, ec);
    if (!ec && size > most) throw std::runtime_error(path + ": file too large for an 8-bit PGM");
    if (!ec) bytes.reserve(static_cast<std::size_t>(size));
  }
  char chunk[1 << 16];
  for (;;) {
    in.read(chunk, sizeof chunk);
    const std::streamsize got = in.gcount();
    if (got > 0) bytes.append(chunk, static_cast<std::size_t>(got));
    if (bytes.size() > most) throw std::runtime_error(path + ": file too large for an 8-bit PGM");
    if (!in) break;
  }
  if (in.bad()) throw std::runtime_error(path + ": cannot read");
  return parse_pgm(bytes, path);
}

std::string format_pgm(const gray_image &img, bool binary) {
  std::ostringstream os;
  os << (binary ? "P5\n" : "P2\n") << img.width << " " << img.height << "\n255\n";
  if (binary) {
    os.write(reinterpret_cast<const char *>(img.pixels.data()), std::streamsize(img.pixels.size()));
  } else {
    for (int y = 0; y < img.height; ++y) {
      for (int x = 0; x < img.width; ++x) os << int(img.at(x, y)) << (x + 1 < img.width ? " " : "");
      os << "\n";
    }
  }
  return os.str();
}

void write_pgm(const std::string &path, const gray_image &img, bool binary) {
  std::ofstream out(path, std::ios::binary);
  const std::string bytes = format_pgm(img, binary);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  if (!out) throw std::runtime_error(path + ": cannot write");
}

}  // namespace course
