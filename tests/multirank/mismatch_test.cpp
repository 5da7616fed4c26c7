// Arguments that differ between ranks: one rank passes another count, dtype,
// op, root or recvcounts than the others, or calls exscan where they scan. Every rank must fail within
// seconds (not hang, not succeed with wrong data) with an error that names
// both ranks' arguments, over shm (mapped signals for small calls, messages
// and mapped buffers for large ones) and tcp, with 2 and 3 ranks.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
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

enum class Kind { kCount, kDtype, kOp, kRoot, kRecvcounts, kCountZero, kBroadcastRoot, kExscan };

struct Mismatch {
  Kind kind;
  const char* name;
  // What the error must name: this rank's argument and the odd rank's.
  const char* common;
  const char* odd;
};

constexpr size_t kSmall = 16, kLarge = 1 << 20;

// The call rank `r` makes (`odd`: the rank that differs); its count is n elements.
hcomm_result_t call(const Mismatch& m, hcomm_comm_t comm, bool odd, int r, size_t n, std::vector<float>& send,
                    std::vector<float>& recv, int nranks) {
  switch (m.kind) {
    case Kind::kCount:
      return hcomm_allreduce(send.data(), recv.data(), odd ? 2 * n : n, HCOMM_FLOAT32, HCOMM_SUM, comm, nullptr);
    case Kind::kCountZero:
      return hcomm_allreduce(send.data(), recv.data(), odd ? 0 : n, HCOMM_FLOAT32, HCOMM_SUM, comm, nullptr);
    case Kind::kDtype:
      return hcomm_allreduce(send.data(), recv.data(), n, odd ? HCOMM_INT32 : HCOMM_FLOAT32, HCOMM_SUM, comm, nullptr);
    case Kind::kOp:
      return hcomm_allreduce(send.data(), recv.data(), n, HCOMM_FLOAT32, odd ? HCOMM_MAX : HCOMM_SUM, comm, nullptr);
    case Kind::kRoot:
      return hcomm_reduce(send.data(), recv.data(), n, HCOMM_FLOAT32, HCOMM_SUM, odd ? 1 : 0, comm, nullptr);
    case Kind::kBroadcastRoot:  // every rank takes itself for the root
      return hcomm_broadcast(send.data(), recv.data(), n, HCOMM_FLOAT32, r, comm, nullptr);
    case Kind::kExscan:
      return (odd ? hcomm_exscan : hcomm_scan)(send.data(), recv.data(), n, HCOMM_FLOAT32, HCOMM_SUM, comm, nullptr);
    case Kind::kRecvcounts: {
      std::vector<size_t> counts(nranks, n), displs(nranks);
      if (odd) counts[0] = n / 2;
      for (int i = 1; i < nranks; ++i) displs[i] = displs[i - 1] + counts[i - 1];
      return hcomm_allgatherv(send.data(), recv.data(), counts.data(), displs.data(), HCOMM_FLOAT32, comm, nullptr);
    }
  }
  return HCOMM_SUCCESS;
}

const Mismatch kMismatches[] = {
    {Kind::kCount, "count", "count %zu,", "count %zu,"},
    {Kind::kDtype, "dtype", "dtype float32", "dtype int32"},
    {Kind::kOp, "op", "op sum", "op max"},
    {Kind::kRoot, "root", "root 0", "root 1"},
    {Kind::kRecvcounts, "recvcounts", "allgatherv (recvcounts", "allgatherv (recvcounts"},
    {Kind::kCountZero, "count_zero", "count %zu,", "count 0,"},
    {Kind::kExscan, "exscan", "called scan (count", "called exscan (count"},
};

void PrintTo(const Mismatch& m, std::ostream* os) { *os << m.name; }

using Param = std::tuple<const char*, int, size_t, Mismatch>;

class ArgumentsDiffer : public ::testing::TestWithParam<Param> {};

// Each rank makes the call, then, should it succeed, a barrier: a rank that
// receives nothing in the call (count 0 returns at once; a broadcast root and
// a reduction's leaves only send) learns of the difference in its next call.
// `calls` records which call failed.
void run(const char* transport, int nranks, size_t n, const Mismatch& m) {
  Job job(nranks, transport, "30");
  const int odd_rank = nranks - 1;
  for (int r = 0; r < nranks; ++r)
    job.spawn(r, [&, r](hcomm_comm_t comm, Outcome& out) {
      std::vector<float> send(2 * n * nranks, 1.0f), recv(2 * n * nranks);
      auto start = Clock::now();
      out.rc = call(m, comm, r == odd_rank, r, n, send, recv, nranks);
      out.calls = 1;
      if (out.rc == HCOMM_SUCCESS) {
        out.rc = hcomm_barrier(comm, nullptr);
        out.calls = 2;
      }
      out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
      std::snprintf(out.message, sizeof out.message, "%s", out.rc ? hcomm_get_last_error() : "both calls succeeded");
      // Stay until every rank has its outcome, as an application that
      // reports the error does: a process that exits at once may take the
      // last words it sent its peers with it (unread data resets a socket).
      __atomic_store_n(&out.reported, 1, __ATOMIC_RELEASE);
      const auto deadline = Clock::now() + std::chrono::seconds(20);
      for (int p = 0; p < nranks && Clock::now() < deadline;)
        __atomic_load_n(&job.outcome(p).reported, __ATOMIC_ACQUIRE) ? ++p : usleep(1000);
    });
  std::vector<int> status = job.join(60);
  char common[64], odd[64];
  std::snprintf(common, sizeof common, m.common, n);
  std::snprintf(odd, sizeof odd, m.odd, 2 * n);
  // A rank that receives nothing in the call (with count 0, or a leaf of a
  // reduction tree with the root it took) may learn of it in its next call.
  // So may scan's rank 0, which only sends.
  const bool later = m.kind == Kind::kCountZero || m.kind == Kind::kBroadcastRoot || m.kind == Kind::kRoot ||
                     m.kind == Kind::kExscan;
  for (int r = 0; r < nranks; ++r) {
    ASSERT_NE(status[r], -1) << "rank " << r << " hung";
    const Outcome& o = job.outcome(r);
    EXPECT_EQ(o.rc, HCOMM_ERR_INVALID_ARGUMENT) << "rank " << r << ": " << o.message;
    EXPECT_LT(o.seconds, 10.0) << "rank " << r << ": " << o.message;
    if (!later) {
      EXPECT_EQ(o.calls, 1) << "rank " << r << " failed only in its next call: " << o.message;
    }
    EXPECT_NE(std::strstr(o.message, common), nullptr)
        << "rank " << r << " does not name '" << common << "': " << o.message;
    EXPECT_NE(std::strstr(o.message, odd), nullptr) << "rank " << r << " does not name '" << odd << "': " << o.message;
    if (m.kind == Kind::kRecvcounts) {
      // Both ranks' counts hash differently: two different recvcounts named.
      const char* first = std::strstr(o.message, "recvcounts hashing to ");
      ASSERT_NE(first, nullptr) << o.message;
      const char* second = std::strstr(first + 1, "recvcounts hashing to ");
      ASSERT_NE(second, nullptr) << o.message;
      EXPECT_NE(std::string(first + 22, 16), std::string(second + 22, 16)) << o.message;
    }
    const std::string odd_named = "rank " + std::to_string(odd_rank);
    EXPECT_NE(std::strstr(o.message, odd_named.c_str()), nullptr) << "rank " << r << ": " << o.message;
  }
}

TEST_P(ArgumentsDiffer, EveryRankFailsNamingBothRanksArguments) {
  const auto& [transport, nranks, n, m] = GetParam();
  run(transport, nranks, n, m);
}

INSTANTIATE_TEST_SUITE_P(TransportsRanksSizes, ArgumentsDiffer,
                         ::testing::Combine(::testing::Values("shm", "tcp"), ::testing::Values(2, 3),
                                            ::testing::Values(kSmall, kLarge), ::testing::ValuesIn(kMismatches)),
                         [](const ::testing::TestParamInfo<Param>& param_info) {
                           const Param& p = param_info.param;
                           return std::string(std::get<0>(p)) + "_" + std::to_string(std::get<1>(p)) + "ranks_" +
                                  (std::get<2>(p) == kSmall ? "small" : "large") + "_" + std::get<3>(p).name;
                         });

// Every rank of a broadcast takes itself for the root: each only sends, so
// none sees the difference in the call; the next call fails on every rank.
TEST(BroadcastRootsDiffer, TheNextCallFailsOnEveryRank) {
  for (const char* transport : {"shm", "tcp"})
    for (size_t n : {kSmall, kLarge}) {
      SCOPED_TRACE(std::string(transport) + (n == kSmall ? " small" : " large"));
      run(transport, 2, n, Mismatch{Kind::kBroadcastRoot, "broadcast_root", "root 0", "root 1"});
    }
}

// The same call on every rank still succeeds, and is right.
TEST(ArgumentsAgree, CallsSucceed) {
  Job job(3, "shm", "30");
  for (int r = 0; r < 3; ++r)
    job.spawn(r, [](hcomm_comm_t comm, Outcome& out) {
      std::vector<float> v(kLarge, 1.0f);
      for (size_t n : {size_t{0}, kSmall, kLarge}) {
        if ((out.rc = hcomm_allreduce(v.data(), v.data(), n, HCOMM_FLOAT32, HCOMM_SUM, comm, nullptr))) break;
      }
      if (out.rc == HCOMM_SUCCESS && (v[0] != 9.0f || v[kLarge - 1] != 3.0f)) out.rc = 100;
      std::snprintf(out.message, sizeof out.message, "%s", out.rc ? hcomm_get_last_error() : "");
      hcomm_comm_destroy(comm);
    });
  std::vector<int> status = job.join(60);
  for (int r = 0; r < 3; ++r) {
    ASSERT_NE(status[r], -1) << "rank " << r << " hung";
    EXPECT_EQ(job.outcome(r).rc, HCOMM_SUCCESS) << "rank " << r << ": " << job.outcome(r).message;
  }
}

}  // namespace
