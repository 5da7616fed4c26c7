// One test process under hcomm-run: its communicator, and its report. A
// wrong result is told with the rank, the job ("5 ranks over shm") and the
// exact case, and the run goes on; a call that fails ends the process (the
// launcher then stops the other ranks).
#pragma once

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cases.hpp"
#include "hcomm/hcomm.h"

namespace hcomm::test {

inline std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

class Job {
 public:
  Job() {
    check(hcomm_comm_init_env(&comm), "hcomm_comm_init_env");
    check(hcomm_comm_rank(comm, &ranks.rank), "hcomm_comm_rank");
    check(hcomm_comm_size(comm, &ranks.size), "hcomm_comm_size");
    CheckedBuffer::set_rank(ranks.rank);
    const char* transports = std::getenv("HCOMM_TRANSPORTS");
    where_ = std::to_string(ranks.size) + " ranks over " + (transports ? transports : "the default transports");
  }
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  [[noreturn]] void fatal(const std::string& what, hcomm_result_t rc) const {
    std::fprintf(stderr, "rank %d (%s): %s failed: %s: %s\n", ranks.rank, where_.c_str(), what.c_str(),
                 hcomm_result_string(rc), hcomm_get_last_error());
    std::exit(1);
  }
  void check(hcomm_result_t rc, const std::string& what) const {
    if (rc != HCOMM_SUCCESS) fatal(what, rc);
  }
  void fail(const std::string& what) {
    std::fprintf(stderr, "rank %d (%s): WRONG: %s\n", ranks.rank, where_.c_str(), what.c_str());
    ++failures_;
  }
  // Tests once, then waits.
  void complete(hcomm_request_t request, const std::string& what) const {
    int done = 0;
    check(hcomm_test(request, &done), what + " (hcomm_test)");
    if (!done) check(hcomm_wait(request), what + " (hcomm_wait)");
  }
  // Collective: rank 0 tells whether `what` was right on every rank.
  void summary(const std::string& what) {
    const uint64_t mine = static_cast<uint64_t>(failures_ - reported_);
    uint64_t all = 0;
    check(hcomm_allreduce(&mine, &all, 1, HCOMM_UINT64, HCOMM_SUM, comm, nullptr), "hcomm_allreduce (of failures)");
    reported_ = failures_;
    if (ranks.rank == 0)
      std::printf("%s on %s: %s\n", what.c_str(), where_.c_str(),
                  all ? ("FAILED, " + std::to_string(all) + " wrong results (see above)").c_str() : "all correct");
    std::fflush(stdout);
  }
  // The exit status of the process.
  int finish() {
    check(hcomm_comm_destroy(comm), "hcomm_comm_destroy");
    comm = nullptr;
    return failures_.load() ? 1 : 0;
  }

  hcomm_comm_t comm = nullptr;
  Ranks ranks{0, 1};

 private:
  std::string where_;
  std::atomic<int> failures_{0};  // fail() may be called by several threads
  int reported_ = 0;
};

}  // namespace hcomm::test
