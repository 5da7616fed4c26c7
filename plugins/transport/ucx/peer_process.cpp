#include "peer_process.hpp"

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace hcomm::ucx {

PeerProcess::PeerProcess(pid_t pid) {
#ifdef SYS_pidfd_open
  pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  gone_at_start_ = pidfd_ < 0 && errno == ESRCH;
#else
  static_cast<void>(pid);
#endif
}

PeerProcess::~PeerProcess() {
  if (pidfd_ >= 0) ::close(pidfd_);
}

bool PeerProcess::alive() const {
  if (gone_at_start_) return false;
  if (pidfd_ < 0) return true;
  pollfd p{.fd = pidfd_, .events = POLLIN, .revents = 0};
  return ::poll(&p, 1, 0) == 0;
}

}  // namespace hcomm::ucx
