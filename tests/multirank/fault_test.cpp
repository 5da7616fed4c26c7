// Faults: a rank killed mid-collective, a rank that never arrives, a stranger
// knocking on the rendezvous. Each test forks its ranks itself (hcomm-run would
// stop the survivors) and checks every survivor's outcome.
#include <arpa/inet.h>
#include <dirent.h>
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
#include <cstring>
#include <functional>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "hcomm/hcomm.h"
#include "tests/multirank/forked_job.hpp"

namespace {

using forked::Clock;
using forked::Job;
using forked::Outcome;

// One large call of a collective on 4 ranks (count floats per block):
// blocking when request is null, else started.
struct FaultCall {
  const char* name;
  hcomm_result_t (*call)(hcomm_comm_t comm, std::vector<float>& send, std::vector<float>& recv, size_t count,
                         hcomm_request_t* request);
};

constexpr size_t kBlock = 1 << 18;

void PrintTo(const FaultCall& f, std::ostream* os) { *os << f.name; }

const FaultCall kFaultCalls[] = {
    {"allreduce",
     [](hcomm_comm_t c, std::vector<float>& s, std::vector<float>& r, size_t n, hcomm_request_t* q) {
       return q ? hcomm_iallreduce(s.data(), r.data(), n, HCOMM_FLOAT32, HCOMM_SUM, c, q)
                : hcomm_allreduce(s.data(), r.data(), n, HCOMM_FLOAT32, HCOMM_SUM, c, nullptr);
     }},
    {"broadcast",
     [](hcomm_comm_t c, std::vector<float>& s, std::vector<float>& r, size_t n, hcomm_request_t* q) {
       return q ? hcomm_ibroadcast(s.data(), r.data(), n, HCOMM_FLOAT32, 0, c, q)
                : hcomm_broadcast(s.data(), r.data(), n, HCOMM_FLOAT32, 0, c, nullptr);
     }},
    {"allgather",
     [](hcomm_comm_t c, std::vector<float>& s, std::vector<float>& r, size_t n, hcomm_request_t* q) {
       return q ? hcomm_iallgather(s.data(), r.data(), n, HCOMM_FLOAT32, c, q)
                : hcomm_allgather(s.data(), r.data(), n, HCOMM_FLOAT32, c, nullptr);
     }},
    {"reduce_scatter",
     [](hcomm_comm_t c, std::vector<float>& s, std::vector<float>& r, size_t n, hcomm_request_t* q) {
       return q ? hcomm_ireduce_scatter(s.data(), r.data(), n, HCOMM_FLOAT32, HCOMM_SUM, c, q)
                : hcomm_reduce_scatter(s.data(), r.data(), n, HCOMM_FLOAT32, HCOMM_SUM, c, nullptr);
     }},
    {"alltoall",
     [](hcomm_comm_t c, std::vector<float>& s, std::vector<float>& r, size_t n, hcomm_request_t* q) {
       return q ? hcomm_ialltoall(s.data(), r.data(), n, HCOMM_FLOAT32, c, q)
                : hcomm_alltoall(s.data(), r.data(), n, HCOMM_FLOAT32, c, nullptr);
     }},
};

// Runs calls until one fails, recording the failing call.
void call_until_error(const FaultCall& f, hcomm_comm_t comm, Outcome& out) {
  std::vector<float> send(4 * kBlock, 1.0f), recv(4 * kBlock);
  for (int i = 0; i < 2000; ++i) {
    auto start = Clock::now();
    hcomm_result_t rc = f.call(comm, send, recv, kBlock, nullptr);
    if (rc != HCOMM_SUCCESS) {
      out.rc = rc;
      out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
      std::snprintf(out.message, sizeof out.message, "%s", hcomm_get_last_error());
      return;
    }
  }
  out.rc = HCOMM_SUCCESS;
  std::snprintf(out.message, sizeof out.message, "2000 calls of %s succeeded although a peer died", f.name);
}

// Three calls of `f`, then a fourth started and tested once, so that this
// rank is in the middle of it when `then` runs (the buffers stay alive).
template <class Then>
void mid_call(const FaultCall& f, hcomm_comm_t comm, Then then) {
  std::vector<float> send(4 * kBlock, 1.0f), recv(4 * kBlock);
  for (int i = 0; i < 3; ++i) f.call(comm, send, recv, kBlock, nullptr);
  hcomm_request_t req;
  f.call(comm, send, recv, kBlock, &req);
  int done = 0;
  hcomm_test(req, &done);
  then();
}

std::vector<std::string> shm_leftovers(const std::vector<pid_t>& pids) {
  std::vector<std::string> found;
  DIR* d = opendir("/dev/shm");
  if (!d) return found;
  while (dirent* e = readdir(d))
    for (pid_t p : pids)
      if (std::string(e->d_name).rfind("hcomm-shm-" + std::to_string(p) + "-", 0) == 0) found.push_back(e->d_name);
  closedir(d);
  return found;
}

class KilledRank : public ::testing::TestWithParam<std::tuple<const char*, FaultCall>> {};

TEST_P(KilledRank, SurvivorsFailWithinFiveSecondsNamingThePeer) {
  const int n = 4, victim = 2;
  const auto& [transport, fault] = GetParam();
  Job job(n, transport, "30");
  for (int r = 0; r < n; ++r)
    job.spawn(r, [&](hcomm_comm_t comm, Outcome& out) {
      if (r != victim) return call_until_error(fault, comm, out);
      mid_call(fault, comm, [] { raise(SIGKILL); });
    });
  std::vector<int> status = job.join(60);
  bool someone_named_victim = false;
  for (int r = 0; r < n; ++r) {
    if (r == victim) {
      EXPECT_TRUE(WIFSIGNALED(status[r]) && WTERMSIG(status[r]) == SIGKILL);
      continue;
    }
    ASSERT_NE(status[r], -1) << "rank " << r << " hung";
    const Outcome& o = job.outcome(r);
    EXPECT_EQ(o.rc, HCOMM_ERR_REMOTE) << "rank " << r << ": " << o.message;
    EXPECT_LT(o.seconds, 5.0) << "rank " << r << ": " << o.message;
    EXPECT_NE(std::strstr(o.message, fault.name), nullptr) << o.message;
    someone_named_victim |= std::strstr(o.message, "rank 2") != nullptr;
  }
  EXPECT_TRUE(someone_named_victim) << "no survivor named the dead rank 2";
  EXPECT_TRUE(shm_leftovers(job.pids()).empty());
}

// The transports built here: ucx and ofi are optional at build time.
std::vector<const char*> fault_transports() {
  std::vector<const char*> transports = {"tcp", "shm"};
#ifdef HCOMM_TEST_HAVE_UCX
  transports.push_back("ucx");
#endif
#ifdef HCOMM_TEST_HAVE_OFI
  transports.push_back("ofi");
#endif
  return transports;
}

INSTANTIATE_TEST_SUITE_P(TransportsAndCollectives, KilledRank,
                         ::testing::Combine(::testing::ValuesIn(fault_transports()), ::testing::ValuesIn(kFaultCalls)),
                         [](const auto& test) {
                           return std::string(std::get<0>(test.param)) + "_" + std::get<1>(test.param).name;
                         });

// A rank killed while the others wait in a receive from any rank (matching
// mode any): the survivors fail within five seconds naming it, although the
// receive names no peer.
class KilledRankDuringWildcardReceive : public ::testing::TestWithParam<const char*> {};

TEST_P(KilledRankDuringWildcardReceive, SurvivorsFailWithinFiveSecondsNamingThePeer) {
  const int n = 3, victim = 2;
  Job job(n, GetParam(), "30");
  setenv("HCOMM_P2P_MATCHING", "any", 1);  // the ranks' communicators match as MPI does
  for (int r = 0; r < n; ++r)
    job.spawn(r, [&](hcomm_comm_t comm, Outcome& out) {
      int64_t one = 1, sum = 0;
      hcomm_allreduce(&one, &sum, 1, HCOMM_INT64, HCOMM_SUM, comm, nullptr);
      if (r == victim) {
        usleep(200000);
        raise(SIGKILL);
      }
      int32_t buf[4];
      hcomm_status_t status;
      const auto start = Clock::now();
      out.rc = hcomm_recv_status(buf, 4, HCOMM_INT32, HCOMM_ANY_SOURCE, HCOMM_ANY_TAG, comm, nullptr, &status);
      out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
      std::snprintf(out.message, sizeof out.message, "%s",
                    out.rc ? hcomm_get_last_error() : "a wildcard receive completed though nobody sent");
    });
  unsetenv("HCOMM_P2P_MATCHING");
  std::vector<int> status = job.join(60);
  for (int r = 0; r < n; ++r) {
    if (r == victim) continue;
    ASSERT_NE(status[r], -1) << "rank " << r << " hung";
    const Outcome& o = job.outcome(r);
    EXPECT_EQ(o.rc, HCOMM_ERR_REMOTE) << "rank " << r << ": " << o.message;
    EXPECT_LT(o.seconds, 5.0) << "rank " << r << ": " << o.message;
    EXPECT_NE(std::strstr(o.message, "rank 2"), nullptr) << o.message;
    EXPECT_NE(std::strstr(o.message, "from any rank"), nullptr) << o.message;
  }
}

INSTANTIATE_TEST_SUITE_P(Transports, KilledRankDuringWildcardReceive, ::testing::ValuesIn(fault_transports()));

// A rank that stops (SIGSTOP) mid-collective holds its connections open, so
// only the deadline finds it: every survivor must fail within about one
// HCOMM_TIMEOUT naming it, and the job (the rendezvous host included) must
// end within about one timeout, not two.
class StalledRank : public ::testing::TestWithParam<const char*> {};

TEST_P(StalledRank, EverySurvivorNamesItWithinOneTimeout) {
  const int n = 4, victim = 2;
  const double timeout_s = 4;
  Job job(n, GetParam(), "4");
  const FaultCall& fault = kFaultCalls[0];
  for (int r = 0; r < n; ++r)
    job.spawn(r, [&](hcomm_comm_t comm, Outcome& out) {
      if (r != victim) {
        call_until_error(fault, comm, out);
        // Every survivor's own timeout is judged: one that closed its
        // connections first would be reported by the others as gone.
        __atomic_store_n(&out.reported, 1, __ATOMIC_RELEASE);
        const auto deadline = Clock::now() + std::chrono::duration<double>(2 * timeout_s);
        for (int p = 0; p < n && Clock::now() < deadline;)
          p == victim || __atomic_load_n(&job.outcome(p).reported, __ATOMIC_ACQUIRE) ? ++p : usleep(1000);
        hcomm_comm_destroy(comm);  // as a program that handles the error does
        return;
      }
      mid_call(fault, comm, [&out] {
        out.seconds = std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
        raise(SIGSTOP);  // stalls mid-call, its connections open
      });
    });
  std::vector<int> status = job.join(4 * timeout_s + 10, {victim});
  const double survivors_ended = std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
  const double stopped_at = job.outcome(victim).seconds;
  ASSERT_GT(stopped_at, 0) << "rank 2 never stopped";
  for (int r = 0; r < n; ++r) {
    if (r == victim) continue;
    ASSERT_NE(status[r], -1) << "rank " << r << " hung";
    const Outcome& o = job.outcome(r);
    EXPECT_EQ(o.rc, HCOMM_ERR_TIMEOUT) << "rank " << r << ": " << o.message;
    EXPECT_LT(o.seconds, timeout_s + 3) << "rank " << r << ": " << o.message;
    EXPECT_NE(std::strstr(o.message, "rank 2 "), nullptr) << "rank " << r << " does not name rank 2: " << o.message;
    for (int other = 0; other < n; ++other) {
      if (other == victim || other == r) continue;
      EXPECT_EQ(std::strstr(o.message, ("rank " + std::to_string(other) + " ").c_str()), nullptr)
          << "rank " << r << " blames rank " << other << ", which was waiting too: " << o.message;
    }
  }
  EXPECT_LT(survivors_ended - stopped_at, timeout_s + 4) << "the job took a second timeout to end";
}

INSTANTIATE_TEST_SUITE_P(Transports, StalledRank, ::testing::Values("tcp", "shm"));

// A rank that slept through its peer's last message (stopped here, as a
// busy host deschedules a rank) finds it when it wakes, though the peer has
// finished the call and left meanwhile: the call completes. Idle past the
// time to look at its peers, it must look at what arrived first: a question
// written to the peer that left would fail the call.
TEST(PeerLeft, ARankThatSleptThroughItsLastMessageCompletes) {
  Job job(2, "tcp", "20");
  // [0]: rank 0 is in its call; [1]: rank 1 may make its own.
  auto* flags =
      static_cast<int*>(mmap(nullptr, 2 * sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  flags[0] = flags[1] = 0;
  for (int r = 0; r < 2; ++r)
    job.spawn(r, [&, r](hcomm_comm_t comm, Outcome& out) {
      if (r == 1)
        while (!__atomic_load_n(&flags[1], __ATOMIC_ACQUIRE)) usleep(1000);
      else
        __atomic_store_n(&flags[0], 1, __ATOMIC_RELEASE);
      int64_t mine = r + 1, sum = 0;
      out.rc = hcomm_allreduce(&mine, &sum, 1, HCOMM_INT64, HCOMM_SUM, comm, nullptr);
      out.calls = static_cast<int>(sum);
      std::snprintf(out.message, sizeof out.message, "%s", out.rc ? hcomm_get_last_error() : "");
      hcomm_comm_destroy(comm);
    });
  while (!__atomic_load_n(&flags[0], __ATOMIC_ACQUIRE)) usleep(1000);
  usleep(30 * 1000);  // rank 0 waits in its call
  kill(job.pids()[0], SIGSTOP);
  __atomic_store_n(&flags[1], 1, __ATOMIC_RELEASE);
  const int left = job.join(20, {0})[1];
  usleep(200 * 1000);  // rank 0 wakes idle for longer than it waits before it looks at its peers
  kill(job.pids()[0], SIGCONT);
  const int woke = job.join(20, {1})[0];
  munmap(flags, 2 * sizeof(int));
  ASSERT_NE(left, -1) << "rank 1 hung";
  ASSERT_NE(woke, -1) << "rank 0 hung";
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(job.outcome(r).rc, HCOMM_SUCCESS) << "rank " << r << ": " << job.outcome(r).message;
    EXPECT_EQ(job.outcome(r).calls, 3) << "rank " << r << "'s sum";
  }
}

TEST(MissingRank, EveryoneFailsAtTheDeadlineNamingIt) {
  Job job(3, "tcp", "2");
  for (int r = 0; r < 2; ++r) job.spawn(r, [](hcomm_comm_t, Outcome&) {});
  std::vector<int> status = job.join(20);
  for (int r = 0; r < 2; ++r) {
    ASSERT_NE(status[r], -1) << "rank " << r << " hung";
    const Outcome& o = job.outcome(r);
    EXPECT_EQ(o.rc, HCOMM_ERR_TIMEOUT) << o.message;
    EXPECT_GE(o.seconds, 1.5);
    EXPECT_LT(o.seconds, 8.0);
    EXPECT_NE(std::strstr(o.message, "2"), nullptr) << "the missing rank is not named: " << o.message;
  }
}

// hcomm_comm_create_group of ranks {0, 1, 2} (first: `first`) where rank 2
// never calls it: every caller fails within about one HCOMM_TIMEOUT naming
// rank 2 (the group's first, to those that wait for its word; else the
// group's rendezvous names it), and nothing hangs.
class GroupMemberMissing : public ::testing::TestWithParam<std::tuple<const char*, int>> {};

TEST_P(GroupMemberMissing, CallersFailWithinOneTimeoutNamingIt) {
  const auto [transports, first] = GetParam();
  const int n = 3, absent = 2;
  const double timeout_s = 2;
  Job job(n, transports, "2");
  for (int r = 0; r < n; ++r)
    job.spawn(r, [&, r](hcomm_comm_t comm, Outcome& out) {
      if (r == absent) {
        sleep(static_cast<unsigned>(3 * timeout_s));  // alive, connected, never calling
        return;
      }
      int members[] = {first, first == 0 ? 1 : 0, first == 2 ? 1 : 2};
      hcomm_comm_t group = nullptr;
      const auto start = Clock::now();
      out.rc = hcomm_comm_create_group(comm, n, members, 7, nullptr, &group);
      out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
      std::snprintf(out.message, sizeof out.message, "%s", out.rc ? hcomm_get_last_error() : "");
      // Every caller's own outcome is judged: one that left first would be
      // reported by the others as gone.
      __atomic_store_n(&out.reported, 1, __ATOMIC_RELEASE);
      const auto deadline = Clock::now() + std::chrono::duration<double>(3 * timeout_s);
      for (int p = 0; p < n && Clock::now() < deadline;)
        p == absent || __atomic_load_n(&job.outcome(p).reported, __ATOMIC_ACQUIRE) ? ++p : usleep(1000);
    });
  std::vector<int> status = job.join(6 * timeout_s + 10);
  for (int r = 0; r < n; ++r) {
    ASSERT_NE(status[r], -1) << "rank " << r << " hung";
    if (r == absent) continue;
    const Outcome& o = job.outcome(r);
    EXPECT_EQ(o.rc, HCOMM_ERR_TIMEOUT) << "rank " << r << ": " << o.message;
    EXPECT_GE(o.seconds, timeout_s - 0.5) << "rank " << r << ": " << o.message;
    EXPECT_LT(o.seconds, 2 * timeout_s + 3) << "rank " << r << ": " << o.message;
    EXPECT_NE(std::strstr(o.message, "rank 2"), nullptr) << "rank " << r << " does not name rank 2: " << o.message;
  }
}

INSTANTIATE_TEST_SUITE_P(TransportsAndFirsts, GroupMemberMissing,
                         ::testing::Combine(::testing::Values("tcp", "shm"), ::testing::Values(0, 2)),
                         [](const auto& test) {
                           return std::string(std::get<0>(test.param)) + "_first" +
                                  std::to_string(std::get<1>(test.param));
                         });

TEST(Rendezvous, StrangerWithoutTheSecretIsRejectedAndTheJobRuns) {
  Job job(2, "tcp", "20");
  for (int r = 0; r < 2; ++r)
    job.spawn(r, [](hcomm_comm_t comm, Outcome& out) {
      std::vector<int32_t> v(1000, 1);
      for (int i = 0; i < 20; ++i) {
        usleep(50000);
        if ((out.rc = hcomm_allreduce(v.data(), v.data(), v.size(), HCOMM_INT32, HCOMM_SUM, comm, nullptr))) return;
      }
      bool right = true;
      for (int32_t x : v) right &= x == (1 << 20);
      if (!right) out.rc = 100;
      hcomm_comm_destroy(comm);
    });
  // Knock while the job runs: garbage, then a long silence; both must be dropped.
  usleep(300000);
  for (int attempt = 0; attempt < 2; ++attempt) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(job.port()));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    if (attempt == 0) {
      char junk[256];
      getrandom(junk, sizeof junk, 0);
      send(fd, junk, sizeof junk, MSG_NOSIGNAL);
    }
    timeval tv{5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char c;
    EXPECT_EQ(recv(fd, &c, 1, 0), 0) << "the rendezvous did not drop a client without the secret within 5 s";
    close(fd);
  }
  std::vector<int> status = job.join(30);
  for (int r = 0; r < 2; ++r) {
    ASSERT_NE(status[r], -1) << "rank " << r << " hung";
    EXPECT_EQ(job.outcome(r).rc, HCOMM_SUCCESS) << "rank " << r << ": " << job.outcome(r).message;
  }
}

}  // namespace
