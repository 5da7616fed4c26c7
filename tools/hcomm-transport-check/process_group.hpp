// The ranks of one test as forked processes: started together, waited for
// with a deadline, killed if they outlive it.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "clock.hpp"

namespace hcomm::tcheck {

struct RankExit {
  enum class How { kRunning, kExited, kSignaled, kKilledAtDeadline };
  How how = How::kRunning;
  int status = 0;  // exit code or signal number

  bool clean() const { return how == How::kExited && status == 0; }
  std::string describe() const;
};

class ProcessGroup {
 public:
  // Forks one process per rank; each runs body(rank) and leaves with _exit, so
  // that the parent's buffers and destructors never run twice.
  ProcessGroup(int nranks, const std::function<int(int rank)>& body);
  // Kills and reaps any rank still running.
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  // Waits until every rank ended or the deadline passed, then kills the rest.
  // `on_exit` hears of each rank as it ends.
  const std::vector<RankExit>& wait(Deadline deadline, const std::function<void(int rank, const RankExit&)>& on_exit);

 private:
  bool reap(bool block);
  void kill_running();

  std::vector<pid_t> pids_;
  std::vector<RankExit> exits_;
};

}  // namespace hcomm::tcheck
