// Watches a peer process of this host for its death: a pidfd becomes
// readable when the process exits. UCX's shared-memory transports notice a
// dead peer only through their keepalive, and only with error handling
// switched on in them; a pidfd tells at once.
#pragma once

#include <sys/types.h>

namespace hcomm::ucx {

class PeerProcess {
 public:
  explicit PeerProcess(pid_t pid);
  ~PeerProcess();
  PeerProcess(const PeerProcess&) = delete;
  PeerProcess& operator=(const PeerProcess&) = delete;

  // -1 where the kernel has no pidfd_open (before Linux 5.3): the peer is
  // then watched by UCX alone.
  int fd() const { return pidfd_; }
  // False once the process has exited (a zombie counts as exited).
  bool alive() const;

 private:
  int pidfd_ = -1;
  bool gone_at_start_ = false;
};

}  // namespace hcomm::ucx
