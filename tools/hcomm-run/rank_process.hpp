// Starting one rank, and telling how it ended.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace hcomm::run {

struct RankLaunch {
  int rank = 0;
  std::string program;            // a path to an executable
  std::vector<std::string> argv;  // argv[0] as the user wrote it
  std::vector<std::string> env;
  int stdout_fd = -1;  // -1: hcomm-run's own
  int stderr_fd = -1;
  int inherited_fd = -1;  // kept open across exec (-1: none)
  sigset_t signal_mask{};
};

// The program was found but the kernel would not run it (exec failed).
class ExecError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Starts the rank in a new process group of its own (the group's id is the
// rank's pid), so that signalling the group reaches the rank and every child
// it starts. Its stdin is /dev/null, and it is killed if hcomm-run dies. Throws std::system_error
// when no process could be made, ExecError when the program would not run.
pid_t spawn_rank(const RankLaunch& launch);

// How a rank ended, from waitid's report.
struct RankEnd {
  int rank = 0;
  pid_t pid = 0;
  bool signalled = false;
  int value = 0;  // the exit code, or the signal

  bool failed() const { return signalled || value != 0; }
  int exit_code() const { return signalled ? 128 + value : value; }
  // "rank 2 (pid 1234) exited with code 3", "... killed by signal 9 (Killed)"
  std::string describe() const;
};

}  // namespace hcomm::run
