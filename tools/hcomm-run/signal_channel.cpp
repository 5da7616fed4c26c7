#include "signal_channel.hpp"

#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace hcomm::run {

SignalChannel::SignalChannel() {
  // A SIGCHLD inherited as ignored would reap the ranks behind our back.
  ::signal(SIGCHLD, SIG_DFL);
  sigset_t handled;
  sigemptyset(&handled);
  sigaddset(&handled, SIGCHLD);
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction current {};
    if (::sigaction(sig, nullptr, &current) == 0 && current.sa_handler != SIG_IGN) sigaddset(&handled, sig);
  }
  // Blocked before any rank starts, so that no SIGCHLD is missed.
  if (::sigprocmask(SIG_BLOCK, &handled, &original_mask_) != 0)
    throw std::system_error(errno, std::generic_category(), "sigprocmask");
  fd_.reset(::signalfd(-1, &handled, SFD_NONBLOCK | SFD_CLOEXEC));
  if (!fd_.valid()) {
    const int err = errno;
    ::sigprocmask(SIG_SETMASK, &original_mask_, nullptr);
    throw std::system_error(err, std::generic_category(), "signalfd");
  }
}

SignalChannel::~SignalChannel() { ::sigprocmask(SIG_SETMASK, &original_mask_, nullptr); }

std::vector<int> SignalChannel::take() {
  std::vector<int> signals;
  signalfd_siginfo info{};
  for (;;) {
    const ssize_t n = ::read(fd_.get(), &info, sizeof info);
    if (n < 0 && errno == EINTR) continue;
    if (n != static_cast<ssize_t>(sizeof info)) return signals;
    signals.push_back(static_cast<int>(info.ssi_signo));
  }
}

}  // namespace hcomm::run
