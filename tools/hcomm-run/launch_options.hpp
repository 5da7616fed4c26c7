// The command line of hcomm-run: launcher options, then the program to start
// and its arguments (everything from the first non-option, or after "--").
#pragma once

#include <CLI/CLI.hpp>
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
};

// A command line that cannot be run; the text names the argument and says why.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// hcomm-run's command line on `app`: the options write `options`, and when
// app.parse ends, options.command holds the program and its arguments as
// given, options among them. `app` and `options` outlive the parse.
void define_launch_options(CLI::App& app, LaunchOptions& options);

}  // namespace hcomm::run
