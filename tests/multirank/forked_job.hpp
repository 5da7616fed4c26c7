// A job of ranks forked by the test itself, each reporting its outcome
// through shared memory, so that a test sees every rank's result even when
// some fail (hcomm-run would stop the others).
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "hcomm/hcomm.h"

namespace forked {

using Clock = std::chrono::steady_clock;

// What a rank reports back through shared memory.
struct Outcome {
  int rc;          // the failing call's result, or HCOMM_SUCCESS
  double seconds;  // from the start of the failing call to its error
  char message[1024];
  int calls;     // calls the rank made, where the test counts them
  int reported;  // set once the rank's outcome is complete, where the test waits for it
};

inline int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

inline std::string random_secret() {
  unsigned char b[16];
  EXPECT_EQ(getrandom(b, sizeof b, 0), 16);
  char hex[33];
  for (int i = 0; i < 16; ++i) std::snprintf(hex + 2 * i, 3, "%02x", b[i]);
  return hex;
}

// A job of forked ranks sharing one rendezvous.
class Job {
 public:
  Job(int nranks, const char* transports, const char* timeout_s)
      : nranks_(nranks), port_(free_port()), secret_(random_secret()), transports_(transports), timeout_(timeout_s) {
    void* p = mmap(nullptr, sizeof(Outcome) * nranks, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    outcomes_ = static_cast<Outcome*>(p);
    for (int r = 0; r < nranks; ++r) outcomes_[r] = Outcome{-1, 0, "did not report"};
  }
  ~Job() {
    for (size_t i = 0; i < pids_.size(); ++i)
      if (!reaped_[i]) kill(pids_[i], SIGKILL), waitpid(pids_[i], nullptr, 0);
    munmap(outcomes_, sizeof(Outcome) * nranks_);
  }

  int port() const { return port_; }
  const Outcome& outcome(int r) const { return outcomes_[r]; }
  const std::vector<pid_t>& pids() const { return pids_; }

  // Forks rank r running body(comm, outcome); the rank records its outcome.
  void spawn(int r, const std::function<void(hcomm_comm_t, Outcome&)>& body) {
    std::fflush(nullptr);  // the child exits normally: no buffered output twice
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      setenv("HCOMM_RANK", std::to_string(r).c_str(), 1);
      setenv("HCOMM_SIZE", std::to_string(nranks_).c_str(), 1);
      setenv("HCOMM_ROOT", ("127.0.0.1:" + std::to_string(port_)).c_str(), 1);
      setenv("HCOMM_SECRET", secret_.c_str(), 1);
      setenv("HCOMM_TRANSPORTS", transports_, 1);
      setenv("HCOMM_TIMEOUT", timeout_, 1);
      setenv("HCOMM_TCP_IF_ADDR", "127.0.0.1", 1);
      // ucx and ofi over their shared memory, unless the caller chose
      setenv("UCX_TLS", "sm,self", 0);
      setenv("HCOMM_OFI_PROVIDER", "shm", 0);
      Outcome& out = outcomes_[r];
      hcomm_comm_t comm = nullptr;
      auto start = Clock::now();
      hcomm_result_t rc = hcomm_comm_init_env(&comm);
      out = Outcome{rc, std::chrono::duration<double>(Clock::now() - start).count(), ""};
      std::snprintf(out.message, sizeof out.message, "%s", rc ? hcomm_get_last_error() : "");
      if (rc == HCOMM_SUCCESS) body(comm, out);
      std::exit(0);  // as a program ends: the rendezvous this rank serves lingers for the others
    }
    pids_.push_back(pid);
    reaped_.push_back(false);
  }

  // Waits for every rank (bounded); returns their wait statuses, -1 for a rank still running.
  // Ranks in `except` are not waited for (the destructor kills them).
  std::vector<int> join(double limit_s, const std::vector<int>& except = {}) {
    std::vector<int> status(pids_.size(), -1);
    auto deadline = Clock::now() + std::chrono::duration<double>(limit_s);
    for (size_t left = pids_.size() - except.size(); left && Clock::now() < deadline; usleep(10000))
      for (size_t i = 0; i < pids_.size(); ++i)
        if (!reaped_[i] && std::find(except.begin(), except.end(), static_cast<int>(i)) == except.end() &&
            waitpid(pids_[i], &status[i], WNOHANG) == pids_[i])
          reaped_[i] = true, --left;
    for (size_t i = 0; i < pids_.size(); ++i)
      if (!reaped_[i]) status[i] = -1;
    return status;
  }

 private:
  int nranks_, port_;
  std::string secret_;
  const char* transports_;
  const char* timeout_;
  Outcome* outcomes_;
  std::vector<pid_t> pids_;
  std::vector<bool> reaped_;
};

}  // namespace forked
