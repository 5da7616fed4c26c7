// Watches a peer process for its death without blocking: a pidfd where the
// kernel has pidfd_open (Linux 5.3), else kill(pid, 0) and the zombie state in
// /proc/<pid>/stat.
#pragma once

#include <sys/types.h>

namespace hcomm::shm {

class PeerProcess {
 public:
  explicit PeerProcess(pid_t pid);
  PeerProcess(const PeerProcess&) = delete;
  PeerProcess& operator=(const PeerProcess&) = delete;
  ~PeerProcess();

  pid_t pid() const { return pid_; }
  // False once the process has exited (a zombie counts as exited).
  bool alive();

 private:
  bool alive_by_pid() const;

  pid_t pid_;
  int pidfd_ = -1;
  bool exited_ = false;
};

}  // namespace hcomm::shm
