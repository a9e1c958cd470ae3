// SPDX-License-Identifier: BSD-3-Clause
#include "common/cli.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace course {

options::options(std::string program, std::string summary)
    : program_(std::move(program)), summary_(std::move(summary)) {}

options &options::add(const std::string &name, std::int64_t &value, std::int64_t min,
                      std::int64_t max, const std::string &help) {
  specs_.push_back({name, help, std::to_string(value), true,
                    [&value, min, max](const std::string &text) -> std::string {
                      errno = 0;
                      char *end = nullptr;
                      long long v = std::strtoll(text.c_str(), &end, 10);
                      if (text.empty() || *end || errno == ERANGE)
                        return "expected a whole number, got '" + text + "'";
                      if (v < min || v > max)
                        return "value " + text + " is out of range [" + std::to_string(min) + ", " +
                               std::to_string(max) + "]";
                      value = v;
                      return "";
                    }});
  return *this;
}

options &options::add(const std::string &name, double &value, double min, double max,
                      const std::string &help) {
  std::ostringstream def;
  def << value;
  specs_.push_back(
      {name, help, def.str(), true, [&value, min, max](const std::string &text) -> std::string {
         errno = 0;
         char *end = nullptr;
         double v = std::strtod(text.c_str(), &end);
         if (text.empty() || *end || errno == ERANGE || v != v)
           return "expected a number, got '" + text + "'";
         if (v < min || v > max) {
           std::ostringstream os;
           os << "value " << text << " is out of range [" << min << ", " << max << "]";
           return os.str();
         }
         value = v;
         return "";
       }});
  return *this;
}

options &options::add(const std::string &name, std::string &value, const std::string &help) {
  specs_.push_back({name, help, value.empty() ? "\"\"" : value, true,
                    [&value](const std::string &text) -> std::string {
                      value = text;
                      return "";
                    }});
  return *this;
}

options &options::flag(const std::string &name, bool &value, const std::string &help) {
  specs_.push_back({name, help, "", false, [&value](const std::string &) -> std::string {
                      value = true;
                      return "";
                    }});
  return *this;
}

std::string options::try_parse(int argc, const char *const *argv, bool &help_requested) {
  help_requested = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      help_requested = true;
      return "";
    }
    // Accept --name value and --name=value; -name as the book's chCommandLine did.
    std::string name = arg, value;
    bool inline_value = false;
    if (name.rfind("--", 0) == 0) name = name.substr(2);
    else if (name.rfind("-", 0) == 0) name = name.substr(1);
    else return "unexpected argument '" + arg + "' (options start with --; see --help)";
    auto eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      inline_value = true;
    }
    const spec *s = nullptr;
    for (const auto &c : specs_)
      if (c.name == name) s = &c;
    if (!s) return "unknown option --" + name + " (see --help)";
    if (s->takes_value && !inline_value) {
      if (i + 1 >= argc) return "--" + name + ": missing value";
      value = argv[++i];
    } else if (!s->takes_value && inline_value) {
      return "--" + name + ": takes no value";
    }
    std::string err = s->set(value);
    if (!err.empty()) return "--" + name + ": " + err;
  }
  return "";
}

void options::parse(int argc, char **argv) {
  bool help = false;
  std::string err = try_parse(argc, argv, help);
  if (help) {
    std::fputs(usage().c_str(), stdout);
    std::exit(0);
  }
  if (!err.empty()) {
    std::fprintf(stderr, "%s: %s\n", program_.c_str(), err.c_str());
    std::exit(2);
  }
}

std::string options::usage() const {
  std::ostringstream os;
  os << "usage: " << program_ << " [options]\n" << summary_ << "\n\noptions:\n";
  for (const auto &s : specs_) {
    std::string left = "  --" + s.name + (s.takes_value ? " <v>" : "");
    os << left << std::string(left.size() < 24 ? 24 - left.size() : 1, ' ') << s.help;
    if (s.takes_value) os << " (default " << s.default_text << ")";
    os << "\n";
  }
  os << "  --help                show this text\n";
  return os.str();
}

}  // namespace course
