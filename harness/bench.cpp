// SPDX-License-Identifier: BSD-3-Clause
#include "harness/bench.h"

#include <cerrno>
#include <cmath>
#include <ctime>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <sys/stat.h>

namespace course {
namespace bench {

timing summarize(std::vector<double> ms) {
  timing t;
  if (ms.empty()) return t;
  std::sort(ms.begin(), ms.end());
  std::size_t n = ms.size();
  t.median_ms = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
  t.min_ms = ms.front();
  t.max_ms = ms.back();
  t.repeats = static_cast<int>(n);
  return t;
}

std::string plot_hint::json() const {
  std::string out = "{\"kind\": " + json_string(kind) + ", \"x\": " + json_string(x) +
                    ", \"y\": " + json_string(y);
  auto text = [&](const char *key, const std::string &v) {
    if (!v.empty()) out += std::string(", \"") + key + "\": " + json_string(v);
  };
  auto flag = [&](const char *key, bool v) {
    if (v) out += std::string(", \"") + key + "\": true";
  };
  text("value", value);
  text("series", series);
  flag("columns_are_x", columns_are_x);
  if (!skip_columns.empty()) {
    out += ", \"skip_columns\": [";
    for (std::size_t i = 0; i < skip_columns.size(); ++i)
      out += (i ? ", " : "") + json_string(skip_columns[i]);
    out += "]";
  }
  text("ceiling_from_row", ceiling_from_row);
  text("ceiling_label", ceiling_label);
  flag("lower_is_better", lower_is_better);
  flag("logx", logx);
  flag("logy", logy);
  return out + "}";
}

std::string json_string(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

namespace {

std::string format_cell(const cell &c, int precision) {
  if (std::holds_alternative<std::monostate>(c)) return "-";
  if (const auto *s = std::get_if<std::string>(&c)) return *s;
  double v = std::get<double>(c);
  if (!std::isfinite(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", precision, v);
  return buf;
}

std::string json_cell(const cell &c) {
  if (std::holds_alternative<std::monostate>(c)) return "null";
  if (const auto *s = std::get_if<std::string>(&c)) return json_string(*s);
  double v = std::get<double>(c);
  if (!std::isfinite(v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.12g", v);
  return buf;
}

std::string iso_date_utc() {
  std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buf;
}

void make_dirs(const std::string &dir) {
  std::string path;
  std::stringstream ss(dir);
  std::string part;
  if (!dir.empty() && dir[0] == '/') path = "/";
  while (std::getline(ss, part, '/')) {
    if (part.empty()) continue;
    path += part + "/";
    if (mkdir(path.c_str(), 0755) != 0 && errno != EEXIST)
      throw std::runtime_error("cannot create directory " + path);
  }
}

}  // namespace

void table::print(std::FILE *out) const {
  std::vector<std::size_t> width(columns_.size());
  for (std::size_t c = 0; c < columns_.size(); ++c) width[c] = columns_[c].name.size();
  std::vector<std::vector<std::string>> text;
  for (const auto &row : rows_) {
    std::vector<std::string> t;
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      t.push_back(c < row.size() ? format_cell(row[c], columns_[c].precision) : "-");
      width[c] = std::max(width[c], t.back().size());
    }
    text.push_back(std::move(t));
  }
  std::fprintf(out, "\n%s\n", title_.c_str());
  auto line = [&](const std::vector<std::string> &cells) {
    for (std::size_t c = 0; c < cells.size(); ++c) {
      // First column (names) left-aligned, numbers right-aligned.
      if (c == 0) std::fprintf(out, "%-*s", static_cast<int>(width[c]), cells[c].c_str());
      else std::fprintf(out, "  %*s", static_cast<int>(width[c]), cells[c].c_str());
    }
    std::fprintf(out, "\n");
  };
  std::vector<std::string> header;
  for (const auto &col : columns_) header.push_back(col.name);
  line(header);
  std::size_t total = 0;
  for (auto w : width) total += w + 2;
  std::fprintf(out, "%s\n", std::string(total - 2, '-').c_str());
  for (const auto &t : text) line(t);
  for (const auto &n : notes_) std::fprintf(out, "%s\n", n.c_str());
  std::fflush(out);
}

std::string table::csv() const {
  std::ostringstream os;
  auto quote = [](const std::string &s) {
    return s.find_first_of(",\"") == std::string::npos ? s : "\"" + s + "\"";
  };
  for (std::size_t c = 0; c < columns_.size(); ++c) os << (c ? "," : "") << quote(columns_[c].name);
  os << "\n";
  for (const auto &row : rows_) {
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      if (c) os << ",";
      const cell &v = c < row.size() ? row[c] : cell{};
      if (const auto *s = std::get_if<std::string>(&v)) os << quote(*s);
      else if (const auto *d = std::get_if<double>(&v)) {
        if (std::isfinite(*d)) os << json_cell(v);
      }
    }
    os << "\n";
  }
  return os.str();
}

std::string table::json() const {
  std::ostringstream os;
  os << "{\"name\": " << json_string(name_) << ", \"title\": " << json_string(title_)
     << ", \"columns\": [";
  for (std::size_t c = 0; c < columns_.size(); ++c)
    os << (c ? ", " : "") << json_string(columns_[c].name);
  os << "], \"rows\": [";
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    os << (r ? ", " : "") << "[";
    for (std::size_t c = 0; c < columns_.size(); ++c)
      os << (c ? ", " : "") << json_cell(c < rows_[r].size() ? rows_[r][c] : cell{});
    os << "]";
  }
  os << "]";
  if (!notes_.empty()) {
    os << ", \"notes\": [";
    for (std::size_t i = 0; i < notes_.size(); ++i) os << (i ? ", " : "") << json_string(notes_[i]);
    os << "]";
  }
  if (!plot_.empty()) os << ", \"plot\": " << plot_;
  os << "}";
  return os.str();
}

report::report(std::string bench, std::string title, device_info device)
    : bench_(std::move(bench)),
      title_(std::move(title)),
      date_(iso_date_utc()),
      device_(std::move(device)) {}

void report::param(const std::string &name, double value) {
  params_.emplace_back(name, json_cell(value));
}
void report::param(const std::string &name, const std::string &value) {
  params_.emplace_back(name, json_string(value));
}

void report::version(const std::string &library, const std::string &value) {
  for (auto &v : versions_)
    if (v.first == library) {
      v.second = value;
      return;
    }
  versions_.emplace_back(library, value);
}

void report::print_preamble(std::FILE *out) const {
  const auto &d = device_;
  std::fprintf(out, "%s\n", title_.c_str());
  std::fprintf(
      out,
      "device %d: %s, compute capability %s, %d SMs, SM clock %d MHz (peak), memory %d MHz x %d bits "
      "(%.0f GB/s theoretical), L2 %.0f MB, %.1f GiB\n",
      d.ordinal, d.name.c_str(), d.cc().c_str(), d.sms, d.sm_clock_mhz, d.mem_clock_mhz,
      d.bus_width_bits, d.theoretical_bandwidth_gbs(), d.l2_bytes / 1048576.0,
      d.memory_bytes / 1073741824.0);
  std::fprintf(out, "CUDA runtime %s, driver %s", cuda_version_string(d.runtime_version).c_str(),
               cuda_version_string(d.driver_version).c_str());
  for (const auto &v : versions_) std::fprintf(out, ", %s %s", v.first.c_str(), v.second.c_str());
  std::fprintf(out, "; %s\n", date_.c_str());
  if (sustained_mhz_ > 0)
    std::fprintf(
        out,
        "SM clock under an FMA load on every SM: %.0f MHz (clock64 against %%globaltimer; peak %d MHz)\n",
        sustained_mhz_, d.sm_clock_mhz);
  if (event_floor_ms_ > 0)
    std::fprintf(out,
                 "event pair with nothing between: %.2f us here (median of 101), taken off every "
                 "per-call time below\n",
                 event_floor_ms_ * 1e3);
  std::fflush(out);
}

void report::print_headlines(std::FILE *out) const {
  if (headlines_.empty()) return;
  std::fprintf(out, "\nHeadlines (this run):\n");
  for (const auto &h : headlines_) std::fprintf(out, "  %s\n", h.c_str());
  std::fflush(out);
}

void report::write(const std::string &dir) const {
  make_dirs(dir);
  std::string slug = bench_;
  for (char &c : slug)
    if (c == '/') c = '-';
  const auto &d = device_;
  std::ostringstream os;
  os << "{\n  \"schema\": \"cuda-course-bench/2\",\n  \"bench\": " << json_string(bench_)
     << ",\n  \"title\": " << json_string(title_)
     << ",\n  \"device\": {\"name\": " << json_string(d.name) << ", \"cc\": " << json_string(d.cc())
     << ", \"sms\": " << d.sms << ", \"sm_clock_mhz\": " << d.sm_clock_mhz
     << ", \"mem_clock_mhz\": " << d.mem_clock_mhz << ", \"bus_width_bits\": " << d.bus_width_bits
     << ", \"l2_bytes\": " << d.l2_bytes << ", \"memory_bytes\": " << d.memory_bytes
     << "},\n  \"cuda\": {\"runtime\": " << json_string(cuda_version_string(d.runtime_version))
     << ", \"driver\": " << json_string(cuda_version_string(d.driver_version))
     << "},\n  \"clocks\": {\"sm_peak_mhz\": " << d.sm_clock_mhz << ", \"sm_sustained_mhz\": "
     << (sustained_mhz_ > 0 ? json_cell(sustained_mhz_) : std::string("null"))
     << ", \"sm_sustained_how\": \"clock64() against %globaltimer in an FMA loop on every SM\"},\n  \"versions\": {\"driver\": "
     << json_string(cuda_version_string(d.driver_version))
     << ", \"runtime\": " << json_string(cuda_version_string(d.runtime_version));
  for (const auto &v : versions_)
    os << ", " << json_string(v.first) << ": " << json_string(v.second);
  os << "},\n  \"timing\": " << (timing_.empty() ? std::string("{}") : timing_)
     << ",\n  \"headlines\": [";
  for (std::size_t i = 0; i < headlines_.size(); ++i)
    os << (i ? ", " : "") << json_string(headlines_[i]);
  os << "],\n  \"date\": " << json_string(date_) << ",\n  \"params\": {";
  for (std::size_t i = 0; i < params_.size(); ++i)
    os << (i ? ", " : "") << json_string(params_[i].first) << ": " << params_[i].second;
  os << "},\n  \"tables\": [\n";
  for (std::size_t i = 0; i < tables_.size(); ++i)
    os << "    " << tables_[i].json() << (i + 1 < tables_.size() ? ",\n" : "\n");
  os << "  ]\n}\n";
  std::string json_path = dir + "/" + slug + ".json";
  std::ofstream(json_path) << os.str();
  for (const auto &t : tables_)
    std::ofstream(dir + "/" + slug + "." + t.name() + ".csv") << t.csv();
  std::printf("\nresults: %s (and one CSV per table beside it)\n", json_path.c_str());
}

}  // namespace bench
}  // namespace course
