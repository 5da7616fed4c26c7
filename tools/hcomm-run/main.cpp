// hcomm-run: the local launcher. Starts N ranks of a program on this machine
// with the environment that hcomm_comm_init_env reads.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>

#include "common/command_line.hpp"
#include "job.hpp"
#include "launch_options.hpp"
#include "program_path.hpp"

namespace {

// A rank's stdin/stdout/stderr must be real descriptors: were one closed, the
// next pipe would take its number and be lost to the rank.
void ensure_standard_fds() {
  for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; ++fd)
    if (::fcntl(fd, F_GETFD) < 0 && ::open("/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY) < 0) return;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace hcomm::run;
  ensure_standard_fds();
  // A closed stdout must not kill hcomm-run and orphan the ranks; ranks get
  // the default disposition back.
  ::signal(SIGPIPE, SIG_IGN);

  CLI::App app;
  LaunchOptions options;
  define_launch_options(app, options);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return hcomm::tools::parse_error_exit(app, e);
  }
  std::string program;
  try {
    program = resolve_program(options.command.front());
  } catch (const UsageError& e) {
    return hcomm::tools::usage_error(app, e.what());
  }

  try {
    Job job(std::move(options), std::move(program));
    return job.run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hcomm-run: %s\n", e.what());
    return 1;
  }
}
