// The command line: hcomm-transport-check [--ranks N] [--only TEST[,TEST]]
// [--timeout S] [--seed S] PLUGIN.so
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace hcomm::tcheck {

struct Options {
  std::string plugin_path;
  std::vector<int> rank_counts = {2, 4};
  std::vector<std::string> only;  // empty: every test
  double timeout_seconds = 60;    // per test and rank count
  uint64_t seed = 0;

  bool selected(const std::string& test) const;
};

// The command line on `app`: the options write `options`, whose seed is a
// random one unless --seed gives it. `options` outlives the parse.
void define_options(CLI::App& app, Options& options);

}  // namespace hcomm::tcheck
