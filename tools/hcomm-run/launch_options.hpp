// The command line of hcomm-run: launcher options, then the program to start
// and its arguments (everything from the first non-option, or after "--").
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace hcomm::run {

inline constexpr int kMaxRanks = 1024;

struct LaunchOptions {
  int nranks = 0;
  bool tag_output = false;
  double timeout_s = 0;              // 0: no time limit
  std::vector<std::string> command;  // the program, then its arguments
  bool help = false;
};

// A command line that cannot be run; the text names the argument and says why.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

LaunchOptions parse_launch_options(int argc, const char* const* argv);
// One line for error messages, and the full text for --help.
const char* usage_line();
const char* help_text();

}  // namespace hcomm::run
