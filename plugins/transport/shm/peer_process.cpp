#include "peer_process.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>

namespace hcomm::shm {

PeerProcess::PeerProcess(pid_t pid) : pid_(pid) {
#ifdef SYS_pidfd_open
  pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd_ < 0 && errno == ESRCH) exited_ = true;
#endif
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
    exited_ = !alive_by_pid();
  }
  return !exited_;
}

bool PeerProcess::alive_by_pid() const {
  if (::kill(pid_, 0) != 0 && errno == ESRCH) return false;
  // "pid (comm) S ...": the state follows the last ')', as comm may hold one.
  std::ifstream stat("/proc/" + std::to_string(pid_) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  size_t close = line.rfind(')');
  return close == std::string::npos || close + 2 >= line.size() || line[close + 2] != 'Z';
}

}  // namespace hcomm::shm
