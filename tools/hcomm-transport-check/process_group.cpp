#include "process_group.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "failure.hpp"

namespace hcomm::tcheck {

namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(5);

}  // namespace

std::string RankExit::describe() const {
  switch (how) {
    case How::kRunning:
      return "still running";
    case How::kExited:
      return format("exited with code %d", status);
    case How::kSignaled:
      return format("killed by signal %d (%s)", status, ::strsignal(status));
    case How::kKilledAtDeadline:
      return "killed at the deadline";
  }
  return "";
}

ProcessGroup::ProcessGroup(int nranks, const std::function<int(int rank)>& body) : exits_(static_cast<size_t>(nranks)) {
  std::fflush(nullptr);  // or the children would flush the parent's pending output again
  for (int rank = 0; rank < nranks; ++rank) {
    pid_t pid = ::fork();
    if (pid < 0) {
      int err = errno;
      kill_running();
      TCHECK_FAIL("fork of rank %d failed: %s", rank, std::strerror(err));
    }
    if (pid == 0) {
      int code = 1;
      try {
        code = body(rank);
      } catch (...) {
        // body reports through the shared region; nothing may escape into the parent's code
      }
      std::fflush(nullptr);
      ::_exit(code);
    }
    pids_.push_back(pid);
  }
}

ProcessGroup::~ProcessGroup() { kill_running(); }

bool ProcessGroup::reap(bool block) {
  bool any = false;
  for (size_t rank = 0; rank < pids_.size(); ++rank) {
    if (exits_[rank].how != RankExit::How::kRunning) continue;
    int status = 0;
    pid_t done = ::waitpid(pids_[rank], &status, block ? 0 : WNOHANG);
    if (done != pids_[rank]) continue;
    any = true;
    exits_[rank] = WIFSIGNALED(status) ? RankExit{RankExit::How::kSignaled, WTERMSIG(status)}
                                       : RankExit{RankExit::How::kExited, WEXITSTATUS(status)};
  }
  return any;
}

const std::vector<RankExit>& ProcessGroup::wait(Deadline deadline,
                                                const std::function<void(int, const RankExit&)>& on_exit) {
  std::vector<bool> heard(pids_.size(), false);
  for (;;) {
    reap(false);
    bool running = false;
    for (size_t rank = 0; rank < pids_.size(); ++rank) {
      if (exits_[rank].how == RankExit::How::kRunning) {
        running = true;
      } else if (!heard[rank]) {
        heard[rank] = true;
        on_exit(static_cast<int>(rank), exits_[rank]);
      }
    }
    if (!running || deadline.expired()) break;
    std::this_thread::sleep_for(kPollInterval);
  }
  kill_running();
  return exits_;
}

void ProcessGroup::kill_running() {
  std::vector<size_t> killed;
  for (size_t rank = 0; rank < pids_.size(); ++rank) {
    if (exits_[rank].how != RankExit::How::kRunning) continue;
    ::kill(pids_[rank], SIGKILL);
    killed.push_back(rank);
  }
  if (killed.empty()) return;
  reap(true);
  for (size_t rank : killed) exits_[rank].how = RankExit::How::kKilledAtDeadline;
}

}  // namespace hcomm::tcheck
