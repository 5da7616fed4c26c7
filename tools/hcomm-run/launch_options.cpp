#include "launch_options.hpp"

#include <memory>
#include <optional>

#include "common/command_line.hpp"

namespace hcomm::run {
namespace {

// Longest --timeout accepted: far beyond any job, short of overflowing a clock.
constexpr double kMaxTimeoutS = 1e8;

// The usage line names the program and its arguments, which CLI11 leaves
// over rather than parses.
class Formatter : public tools::Formatter {
 public:
  std::string make_usage(const CLI::App* /*app*/, std::string name) const override {
    return get_label("Usage") + ": " + name + " [OPTIONS] [--] program [args...]\n";
  }
};

// What CLI11 left over: the program and its arguments, after a "--" that
// ended the options; an unknown option before the program is an error.
std::vector<std::string> program_and_arguments(const CLI::App& app) {
  std::vector<std::string> rest = app.remaining();
  if (!rest.empty() && rest.front() == "--") {
    rest.erase(rest.begin());
  } else if (!rest.empty() && rest.front().size() > 1 && rest.front()[0] == '-') {
    throw CLI::ExtrasError({rest.front()});
  }
  return rest;
}

}  // namespace

void define_launch_options(CLI::App& app, LaunchOptions& options) {
  tools::describe(
      app, "hcomm-run",
      "Starts N ranks of `program` on this machine, each with HCOMM_RANK, HCOMM_SIZE, HCOMM_LOCAL_RANK, "
      "HCOMM_LOCAL_SIZE, HCOMM_ROOT and HCOMM_SECRET set. The first argument that is no option (or the one after "
      "--) is the program: it and every argument after it go to the ranks unchanged, options among them.",
      "When a rank fails (non-zero exit or a signal), the others are stopped and hcomm-run exits with that rank's "
      "code (128+signal for a signal). SIGINT, SIGTERM and SIGHUP are forwarded to every rank; a second one kills "
      "them. Ranks read standard input from /dev/null. Each rank has a process group of its own: when the job "
      "ends, processes a rank left in it are killed, and the ranks' leftover shared memory "
      "(/dev/shm/hcomm-ofi-<pid>-*) is removed.\n"
      "Exit status: 0 when every rank exits 0; 2 for a command line that cannot run; 124 after --timeout; 1 when "
      "hcomm-run itself fails (the message says why).");
  app.formatter(std::make_shared<Formatter>());
  tools::add_integer(app, "-n", options.nranks, 1, kMaxRanks, "N",
                     "Number of ranks, 1 to " + std::to_string(kMaxRanks) + " (required)");
  tools::add_switch(app, "--tag-output", options.tag_output, "Prefix every output line of rank i with \"[i] \"");
  app.add_option("--timeout", options.timeout_s, "Stop the job after S seconds and exit with 124")
      ->type_name("S")
      ->check(tools::number_in(0, false, kMaxTimeoutS, "a positive number of seconds, at most 1e8"));
  app.prefix_command();
  app.callback([&app, &options] {
    options.command = program_and_arguments(app);
    if (options.nranks == 0) throw CLI::ValidationError("missing -n N, the number of ranks to start");
    if (options.command.empty()) throw CLI::ValidationError("missing the program to run");
  });
}

}  // namespace hcomm::run
