// SPDX-License-Identifier: BSD-3-Clause
// Command-line options in the book's style (--name value), declared with their defaults and
// ranges. An unknown flag, a value that is not a number, or one out of range ends the program
// with one line naming the flag, and exit status 2. --help lists the options.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace course {

class options {
 public:
  options(std::string program, std::string summary);

  // The variable keeps its value when the flag is absent; that value is shown as the default.
  options &add(const std::string &name, std::int64_t &value, std::int64_t min, std::int64_t max,
               const std::string &help);
  options &add(const std::string &name, double &value, double min, double max,
               const std::string &help);
  options &add(const std::string &name, std::string &value, const std::string &help);
  options &flag(const std::string &name, bool &value, const std::string &help);

  // Exits the process (status 2) on a bad command line, (status 0) after --help.
  void parse(int argc, char **argv);
  // The same, but returns the one-line error instead of exiting ("" when fine); for tests.
  std::string try_parse(int argc, const char *const *argv, bool &help_requested);
  std::string usage() const;

 private:
  struct spec {
    std::string name, help, default_text;
    bool takes_value;
    std::function<std::string(const std::string &)> set;  // returns an error or ""
  };
  std::string program_, summary_;
  std::vector<spec> specs_;
};

}  // namespace course
