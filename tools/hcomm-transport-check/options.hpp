// The command line: hcomm-transport-check [--ranks N] [--only TEST[,TEST]]
// [--timeout S] [--seed S] PLUGIN.so
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace hcomm::tcheck {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Options {
  std::string plugin_path;
  std::vector<int> rank_counts = {2, 4};
  std::vector<std::string> only;  // empty: every test
  double timeout_seconds = 60;    // per test and rank count
  uint64_t seed = 0;
  bool help = false;

  bool selected(const std::string& test) const;
};

// Throws UsageError naming the argument and what it accepts.
Options parse_options(int argc, char** argv);
std::string usage();

}  // namespace hcomm::tcheck
