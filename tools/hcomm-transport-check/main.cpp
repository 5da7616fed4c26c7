// hcomm-transport-check: the conformance check that every transport plugin
// must pass. It loads the plugin with dlopen only, so a plugin can be checked
// on its own, without the rest of HComm.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "check_services.hpp"
#include "common/command_line.hpp"
#include "group_runner.hpp"
#include "options.hpp"
#include "result_table.hpp"

using namespace hcomm::tcheck;

namespace {

constexpr int kExitFailed = 1;

}  // namespace

int main(int argc, char** argv) {
  CLI::App app;
  Options options;
  define_options(app, options);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return hcomm::tools::parse_error_exit(app, e);
  }
  std::string debug_error;
  if (!debug_level_from_env(&debug_error)) return hcomm::tools::usage_error(app, debug_error);

  ResultTable table(stdout);
  table.print_header(options);
  GroupRunner runner(options);
  try {
    for (const TestCase& test : test_cases()) {
      if (test.library_only) {
        Row row = runner.run(test, 1);
        table.add(row);
        if (row.result != Outcome::kPass) {
          std::printf("\nthe other tests were not run: they need a plugin that passes abi\n");
          break;
        }
      } else if (options.selected(test.name)) {
        for (int nranks : options.rank_counts) table.add(runner.run(test, nranks));
      }
    }
  } catch (const std::exception& e) {  // the checker itself could not run (fork, mmap)
    std::fprintf(stderr, "hcomm-transport-check: %s\n", e.what());
    return kExitFailed;
  }
  return table.print_summary() ? 0 : kExitFailed;
}
