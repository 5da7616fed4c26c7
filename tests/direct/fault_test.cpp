// A rank killed in the middle of a direct allreduce: every survivor must
// fail with HCOMM_ERR_REMOTE within seconds, naming the collective, and no
// rank may hang. The test forks its ranks itself (hcomm-run would stop the
// survivors); rank 0 makes the unique id and hands it to the others through
// shared memory, so that this process starts no thread (the rendezvous
// service's) before it forks: a child of a threaded process may find a lock
// of the allocator held for ever.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <string>
#include <tuple>
#include <vector>

#include "hcomm/hcomm.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Outcome {
  int rc;          // the failing call's result
  double seconds;  // from the start of that call to its error
  char message[1024];
};

// Ranks forked from this process, reporting through shared memory.
class ForkedJob {
 public:
  ForkedJob(int nranks, std::vector<std::pair<const char*, std::string>> env) : nranks_(nranks), env_(std::move(env)) {
    void* p = mmap(nullptr, bytes(), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    shared_ = new (p) Shared{};
    outcomes_ = reinterpret_cast<Outcome*>(shared_ + 1);
    for (int r = 0; r < nranks; ++r) outcomes_[r] = Outcome{-1, 0, "did not report"};
  }
  ~ForkedJob() {
    for (pid_t pid : pids_)
      if (pid > 0) kill(pid, SIGKILL), waitpid(pid, nullptr, 0);
    munmap(shared_, bytes());
  }

  void spawn(int rank, const std::function<void(hcomm_comm_t, Outcome&)>& body) {
    std::fflush(nullptr);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      for (const auto& [name, value] : env_) setenv(name, value.c_str(), 1);
      Outcome& out = outcomes_[rank];
      hcomm_comm_t comm = nullptr;
      hcomm_result_t rc = rank == 0 ? make_id() : await_id();
      if (rc == HCOMM_SUCCESS) rc = hcomm_comm_init_rank(&comm, &shared_->id, nranks_, rank);
      out = Outcome{rc, 0, ""};
      std::snprintf(out.message, sizeof out.message, "%s", rc ? hcomm_get_last_error() : "");
      if (rc == HCOMM_SUCCESS) body(comm, out);
      std::_Exit(0);
    }
    pids_.push_back(pid);
  }

  // Every rank's wait status after at most limit_s; -1 for one still running.
  std::vector<int> join(double limit_s) {
    std::vector<int> status(pids_.size(), -1);
    const auto deadline = Clock::now() + std::chrono::duration<double>(limit_s);
    for (size_t left = pids_.size(); left && Clock::now() < deadline; usleep(10000))
      for (size_t i = 0; i < pids_.size(); ++i)
        if (pids_[i] > 0 && waitpid(pids_[i], &status[i], WNOHANG) == pids_[i]) pids_[i] = 0, --left;
    return status;
  }
  const Outcome& outcome(int r) const { return outcomes_[r]; }

 private:
  // The unique id, then each rank's outcome.
  struct alignas(Outcome) Shared {
    hcomm_unique_id_t id;
    std::atomic<bool> id_ready;
  };
  size_t bytes() const { return sizeof(Shared) + sizeof(Outcome) * nranks_; }
  hcomm_result_t make_id() {
    const hcomm_result_t rc = hcomm_get_unique_id(&shared_->id);
    shared_->id_ready.store(rc == HCOMM_SUCCESS, std::memory_order_release);
    return rc;
  }
  hcomm_result_t await_id() {
    const auto deadline = Clock::now() + std::chrono::seconds(30);
    while (!shared_->id_ready.load(std::memory_order_acquire))
      if (Clock::now() > deadline) return HCOMM_ERR_TIMEOUT;
      else usleep(1000);
    return HCOMM_SUCCESS;
  }

  int nranks_;
  std::vector<std::pair<const char*, std::string>> env_;
  Shared* shared_;
  Outcome* outcomes_;
  std::vector<pid_t> pids_;
};

// Allreduces of 4 MiB, well beyond the 64K window, until one fails.
constexpr size_t kCount = size_t{1} << 20;

void allreduce_until_error(hcomm_comm_t comm, Outcome& out) {
  std::vector<float> in(kCount, 1.0f), sum(kCount);
  for (int i = 0; i < 2000; ++i) {
    const auto start = Clock::now();
    hcomm_result_t rc = hcomm_allreduce(in.data(), sum.data(), kCount, HCOMM_FLOAT32, HCOMM_SUM, comm, nullptr);
    if (rc != HCOMM_SUCCESS) {
      out.rc = rc;
      out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
      std::snprintf(out.message, sizeof out.message, "%s", hcomm_get_last_error());
      hcomm_comm_destroy(comm);
      return;
    }
  }
  std::snprintf(out.message, sizeof out.message, "2000 allreduces succeeded although a peer died");
}

// The algorithm, and whether ranks may read each other's buffers (cross-memory
// attach) or go through the windows only.
using Variant = std::tuple<const char*, bool>;
class DirectKilledRank : public ::testing::TestWithParam<Variant> {};

TEST_P(DirectKilledRank, SurvivorsFailWithinSecondsNamingThePeer) {
  const int n = 4, victim = 2;
  const char* algorithm = std::get<0>(GetParam());
  ForkedJob job(n, {{"HCOMM_TRANSPORTS", "shm"},
                    {"HCOMM_TUNE", std::string("allreduce:@") + algorithm},
                    {"HCOMM_WINDOW_BYTES", "64K"},
                    {"HCOMM_SHM_CMA", std::get<1>(GetParam()) ? "1" : "0"},
                    {"HCOMM_TIMEOUT", "30"}});
  for (int r = 0; r < n; ++r)
    job.spawn(r, [&](hcomm_comm_t comm, Outcome& out) {
      if (r != victim) return allreduce_until_error(comm, out);
      std::vector<float> in(kCount, 1.0f), sum(kCount);
      for (int i = 0; i < 3; ++i) hcomm_allreduce(in.data(), sum.data(), kCount, HCOMM_FLOAT32, HCOMM_SUM, comm, nullptr);
      hcomm_request_t req;
      hcomm_iallreduce(in.data(), sum.data(), kCount, HCOMM_FLOAT32, HCOMM_SUM, comm, &req);
      int done = 0;
      hcomm_test(req, &done);
      raise(SIGKILL);  // dies in the middle of the allreduce
    });
  const std::vector<int> status = job.join(60);
  bool named = false;
  for (int r = 0; r < n; ++r) {
    if (r == victim) {
      EXPECT_TRUE(WIFSIGNALED(status[r]) && WTERMSIG(status[r]) == SIGKILL);
      continue;
    }
    ASSERT_NE(status[r], -1) << "rank " << r << " hung";
    const Outcome& o = job.outcome(r);
    EXPECT_EQ(o.rc, HCOMM_ERR_REMOTE) << "rank " << r << ": " << o.message;
    EXPECT_LT(o.seconds, 5.0) << "rank " << r << ": " << o.message;
    EXPECT_NE(std::strstr(o.message, "allreduce"), nullptr) << o.message;
    EXPECT_NE(std::strstr(o.message, algorithm), nullptr) << o.message;
    named |= std::strstr(o.message, "rank 2") != nullptr;
  }
  EXPECT_TRUE(named) << "no survivor named the dead rank 2";
}

INSTANTIATE_TEST_SUITE_P(Algorithms, DirectKilledRank,
                         ::testing::Combine(::testing::Values("one_shot", "two_shot"), ::testing::Bool()));

}  // namespace
