#include "rank_process.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "unique_fd.hpp"

namespace hcomm::run {
namespace {

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (const std::string& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// Runs in the child between fork and exec: async-signal-safe calls only. An
// exec failure is reported through `error_fd` (closed by a successful exec).
[[noreturn]] void become_rank(const RankLaunch& launch, pid_t parent, char* const* argv, char* const* envp,
                              int error_fd) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);  // hcomm-run died before prctl took effect
  const int devnull = ::open("/dev/null", O_RDONLY);
  if (devnull >= 0 && devnull != STDIN_FILENO) {
    ::dup2(devnull, STDIN_FILENO);
    ::close(devnull);
  }
  if (launch.stdout_fd >= 0) ::dup2(launch.stdout_fd, STDOUT_FILENO);
  if (launch.stderr_fd >= 0) ::dup2(launch.stderr_fd, STDERR_FILENO);
  if (launch.inherited_fd >= 0) ::fcntl(launch.inherited_fd, F_SETFD, 0);
  ::signal(SIGPIPE, SIG_DFL);
  ::sigprocmask(SIG_SETMASK, &launch.signal_mask, nullptr);
  ::execve(launch.program.c_str(), argv, envp);
  const int err = errno;
  [[maybe_unused]] const ssize_t written = ::write(error_fd, &err, sizeof err);
  ::_exit(127);
}

}  // namespace

pid_t spawn_rank(const RankLaunch& launch) {
  const std::vector<char*> argv = c_strings(launch.argv);
  const std::vector<char*> envp = c_strings(launch.env);
  int exec_pipe[2];
  if (::pipe2(exec_pipe, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe2");
  UniqueFd exec_error_read(exec_pipe[0]);
  UniqueFd exec_error_write(exec_pipe[1]);

  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::system_error(errno, std::generic_category(), "fork");
  if (pid == 0) become_rank(launch, parent, argv.data(), envp.data(), exec_error_write.get());
  // Also set here: whichever of parent and child runs first, the group exists
  // before the parent ever signals it.
  ::setpgid(pid, pid);
  exec_error_write.reset();

  int exec_errno = 0;
  ssize_t n;
  do {
    n = ::read(exec_error_read.get(), &exec_errno, sizeof exec_errno);
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    ::waitpid(pid, nullptr, 0);
    throw ExecError("cannot execute '" + launch.program + "' for rank " + std::to_string(launch.rank) + ": " +
                    std::strerror(exec_errno));
  }
  return pid;
}

std::string RankEnd::describe() const {
  std::string text = "rank " + std::to_string(rank) + " (pid " + std::to_string(pid) + ") ";
  if (!signalled) return text + "exited with code " + std::to_string(value);
  const char* name = ::strsignal(value);
  return text + "killed by signal " + std::to_string(value) + " (" + (name ? name : "unknown") + ")";
}

}  // namespace hcomm::run
