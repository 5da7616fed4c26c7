// Watches a peer process of this host for its death without blocking: a
// pidfd (Linux 5.3) turns readable when the process exits, zombie or not;
// without one, kill(pid, 0).
#pragma once

#include <sys/types.h>

namespace hcomm::ofi {

class PeerProcess {
 public:
  explicit PeerProcess(pid_t pid);
  PeerProcess(const PeerProcess&) = delete;
  PeerProcess& operator=(const PeerProcess&) = delete;
  ~PeerProcess();

  pid_t pid() const { return pid_; }
  // False once the process has exited.
  bool alive();

 private:
  pid_t pid_;
  int pidfd_ = -1;
  bool exited_ = false;
};

}  // namespace hcomm::ofi
