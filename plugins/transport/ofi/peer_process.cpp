#include "peer_process.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace hcomm::ofi {

PeerProcess::PeerProcess(pid_t pid) : pid_(pid) {
#ifdef SYS_pidfd_open
  pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#endif
  if (pidfd_ < 0 && ::kill(pid, 0) != 0 && errno == ESRCH) exited_ = true;
}

PeerProcess::~PeerProcess() {
  if (pidfd_ >= 0) ::close(pidfd_);
}

bool PeerProcess::alive() {
  if (exited_) return false;
  if (pidfd_ >= 0) {
    pollfd p{.fd = pidfd_, .events = POLLIN, .revents = 0};
    exited_ = ::poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR));
  } else {
    exited_ = ::kill(pid_, 0) != 0 && errno == ESRCH;
  }
  return !exited_;
}

}  // namespace hcomm::ofi
