// The exchange plugin's bruck, pairwise and linear algorithms, loaded from
// its library: every rank's schedule for sizes 1..17 and 31..33, checked and
// run together in the simulator (recursive_exchange_sim.hpp) against a
// serial reference, over counts below, at and above the number of ranks,
// every chunking, in place on no, all and every other rank, eager and
// rendezvous sends, every root of the rooted collectives and uneven alltoallv
// layouts with gaps; then schedule shapes, costs and errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "recursive_exchange_sim.hpp"

namespace hcomm::sim {
namespace {

struct Algorithm {
  const char* name;
  hcomm_coll_t coll;
};

void PrintTo(const Algorithm& a, std::ostream* os) { *os << a.name << " collective " << a.coll; }

const Algorithm kAlgorithms[] = {
    {"bruck", HCOMM_COLL_ALLGATHER},    {"bruck", HCOMM_COLL_ALLTOALL},   {"pairwise", HCOMM_COLL_ALLTOALL},
    {"pairwise", HCOMM_COLL_ALLTOALLV}, {"linear", HCOMM_COLL_GATHER},    {"linear", HCOMM_COLL_SCATTER},
    {"linear", HCOMM_COLL_ALLTOALL},    {"linear", HCOMM_COLL_ALLTOALLV},
};

const hcomm_algorithm_desc_t* exchange(const char* name, hcomm_coll_t coll) {
  std::string why;
  const hcomm_algorithm_desc_t* algo = find_algorithm("exchange", name, coll, &why);
  EXPECT_NE(algo, nullptr) << why;
  return algo;
}

// Fewer counts on the largest communicators, whose schedules take longest.
std::vector<uint64_t> counts(int n) {
  std::vector<uint64_t> out = {0, 1, 3, static_cast<uint64_t>(n + 1)};
  if (n <= 17) out.insert(out.end(), {2, 7, static_cast<uint64_t>(n - 1), 61});
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<int> roots(int n) {
  if (n <= 9) {
    std::vector<int> all(n);
    for (int r = 0; r < n; ++r) all[r] = r;
    return all;
  }
  return {0, n / 2, n - 1};
}

// Rank s sends C[s][r] elements to rank r, zeros among them. Receive blocks
// lie in reverse rank order with a gap of one element before each; send
// blocks start at rank + 1 with gaps of two. A rank in place sends from its
// receive layout, so C is symmetric when any rank is.
void set_alltoallv_layout(Call& c) {
  const int n = c.nranks;
  const bool symmetric = std::find(c.in_place.begin(), c.in_place.end(), true) != c.in_place.end();
  auto elements = [&](int s, int r) -> size_t {
    const uint64_t k = c.count;
    return symmetric ? (k + 3 * static_cast<uint64_t>(s + r) + static_cast<uint64_t>(s * r)) % (k + 2)
                     : (k + 5 * static_cast<uint64_t>(s) + 3 * static_cast<uint64_t>(r)) % (k + 2);
  };
  c.send_counts.assign(n, std::vector<size_t>(n));
  c.send_displs.assign(n, std::vector<size_t>(n));
  c.recv_counts.assign(n, std::vector<size_t>(n));
  c.recv_displs.assign(n, std::vector<size_t>(n));
  for (int r = 0; r < n; ++r) {
    size_t at = 0;
    for (int s = n - 1; s >= 0; --s) {
      c.recv_counts[r][s] = elements(s, r);
      c.recv_displs[r][s] = at + 1;
      at += 1 + c.recv_counts[r][s];
    }
    at = 0;
    for (int j = 0; j < n; ++j) {
      const int to = (r + 1 + j) % n;
      c.send_counts[r][to] = elements(r, to);
      c.send_displs[r][to] = at + 2;
      at += 2 + c.send_counts[r][to];
    }
  }
}

using Param = std::tuple<Algorithm, int>;

class ExchangeAlgorithm : public ::testing::TestWithParam<Param> {};

TEST_P(ExchangeAlgorithm, MatchesTheSerialReference) {
  const auto [which, n] = GetParam();
  const hcomm_algorithm_desc_t* algo = exchange(which.name, which.coll);
  ASSERT_NE(algo, nullptr);
  const bool rooted = which.coll == HCOMM_COLL_GATHER || which.coll == HCOMM_COLL_SCATTER;
  uint32_t seed = 1;
  for (uint64_t count : counts(n))
    for (const std::vector<bool>& in_place : in_place_patterns(n))
      for (int root : rooted ? roots(n) : std::vector<int>{0})
        for (hcomm_dtype_t dtype : {HCOMM_INT64, HCOMM_FLOAT32}) {
          SCOPED_TRACE(::testing::Message() << "count " << count << " in place " << pattern_name(in_place) << " root "
                                            << root << " dtype " << dtype);
          Call c = {
              .coll = which.coll, .nranks = n, .count = count, .dtype = dtype, .root = root, .in_place = in_place};
          if (which.coll == HCOMM_COLL_ALLTOALLV) set_alltoallv_layout(c);
          run_typed(*algo, c, seed++);
          if (::testing::Test::HasFailure()) return;
        }
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  const auto [which, n] = info.param;
  const char* coll = which.coll == HCOMM_COLL_ALLGATHER   ? "allgather"
                     : which.coll == HCOMM_COLL_ALLTOALL  ? "alltoall"
                     : which.coll == HCOMM_COLL_ALLTOALLV ? "alltoallv"
                     : which.coll == HCOMM_COLL_GATHER    ? "gather"
                                                          : "scatter";
  return std::string(which.name) + "_" + coll + "_n" + std::to_string(n);
}

INSTANTIATE_TEST_SUITE_P(Sizes, ExchangeAlgorithm,
                         ::testing::Combine(::testing::ValuesIn(kAlgorithms),
                                            ::testing::Values(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 17, 31, 32,
                                                              33)),
                         param_name);

// ---------------------------------------------------------------------------
// Schedule shapes.

Call plain(hcomm_coll_t coll, int n, uint64_t count) {
  return {.coll = coll, .nranks = n, .count = count, .in_place = std::vector<bool>(n, false)};
}

std::vector<const hcomm_step_t*> of_kind(const RankSchedule& s, hcomm_step_kind_t kind) {
  std::vector<const hcomm_step_t*> out;
  for (const hcomm_step_t& step : s.steps)
    if (step.kind == kind) out.push_back(&step);
  return out;
}

TEST(BruckSchedule, OneMessageEachWayPerRound) {
  for (hcomm_coll_t coll : {HCOMM_COLL_ALLGATHER, HCOMM_COLL_ALLTOALL}) {
    const hcomm_algorithm_desc_t* algo = exchange("bruck", coll);
    ASSERT_NE(algo, nullptr);
    const auto ranks = build_all(*algo, plain(coll, 11, 3), kChunkings[0].rule);
    for (int r = 0; r < 11; ++r) {
      EXPECT_EQ(of_kind(ranks[r], HCOMM_STEP_SEND).size(), 4u) << "rank " << r;
      EXPECT_EQ(of_kind(ranks[r], HCOMM_STEP_RECV).size(), 4u) << "rank " << r;
    }
  }
}

// Pairwise: each round's transfers wait for the previous round's; linear:
// no transfer waits for another.
TEST(DirectAlltoallSchedule, PairwisePacesRoundsLinearPostsAll) {
  for (const char* name : {"pairwise", "linear"}) {
    const hcomm_algorithm_desc_t* algo = exchange(name, HCOMM_COLL_ALLTOALL);
    ASSERT_NE(algo, nullptr);
    const auto ranks = build_all(*algo, plain(HCOMM_COLL_ALLTOALL, 7, 5), kChunkings[0].rule);
    for (int r = 0; r < 7; ++r) {
      const auto sends = of_kind(ranks[r], HCOMM_STEP_SEND);
      ASSERT_EQ(sends.size(), 6u);
      for (size_t k = 0; k < sends.size(); ++k) {
        EXPECT_EQ(sends[k]->peer, (r + 1 + static_cast<int>(k)) % 7) << name << " rank " << r;
        EXPECT_EQ(sends[k]->ndeps, std::string(name) == "pairwise" && k > 0 ? 2u : 0u) << name << " rank " << r;
      }
    }
  }
}

TEST(DirectAlltoallSchedule, InPlaceSendsFromScratch) {
  const hcomm_algorithm_desc_t* algo = exchange("pairwise", HCOMM_COLL_ALLTOALL);
  ASSERT_NE(algo, nullptr);
  Call c = plain(HCOMM_COLL_ALLTOALL, 4, 5);
  c.in_place.assign(4, true);
  const auto ranks = build_all(*algo, c, kChunkings[0].rule);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(ranks[r].scratch, 4u * 5 * 8);
    for (const hcomm_step_t* send : of_kind(ranks[r], HCOMM_STEP_SEND))
      EXPECT_EQ(send->src.buffer, static_cast<uint32_t>(HCOMM_BUF_SCRATCH));
  }
}

// ---------------------------------------------------------------------------
// Costs, and the choices they make.

double cost_of(const char* name, hcomm_coll_t coll, int n, uint64_t count) {
  const hcomm_algorithm_desc_t* algo = exchange(name, coll);
  if (!algo) return -1;
  const Call c = plain(coll, n, count);
  const hcomm_coll_args_t args = c.args(0);
  const hcomm_comm_view_t comm = comm_view(n, 0);
  return algo->cost(&args, &comm);
}

TEST(ExchangeCosts, FollowTheLinkModel) {
  const hcomm_link_model_t l = comm_view(1, 0).link;
  const double b = 800;  // 100 int64
  EXPECT_DOUBLE_EQ(cost_of("bruck", HCOMM_COLL_ALLGATHER, 5, 100),
                   3 * l.alpha_us + 4 * b * l.beta_us_per_byte + 6 * b * l.gamma_us_per_byte);
  // n = 5 moves indices {1,3} {2,3} {4}: 5 blocks.
  EXPECT_DOUBLE_EQ(cost_of("bruck", HCOMM_COLL_ALLTOALL, 5, 100),
                   3 * l.alpha_us + 5 * b * l.beta_us_per_byte + 20 * b * l.gamma_us_per_byte);
  EXPECT_DOUBLE_EQ(cost_of("pairwise", HCOMM_COLL_ALLTOALL, 5, 100),
                   4 * l.alpha_us + 4 * b * l.beta_us_per_byte + b * l.gamma_us_per_byte);
  EXPECT_DOUBLE_EQ(cost_of("linear", HCOMM_COLL_ALLTOALL, 5, 100),
                   2.5 * l.alpha_us + 4 * b * l.beta_us_per_byte + b * l.gamma_us_per_byte);
  EXPECT_DOUBLE_EQ(cost_of("linear", HCOMM_COLL_GATHER, 9, 100),
                   (1 + 3.5 + 4) * l.alpha_us + 8 * b * l.beta_us_per_byte + b * l.gamma_us_per_byte);
  EXPECT_DOUBLE_EQ(cost_of("linear", HCOMM_COLL_SCATTER, 9, 100),
                   (1 + 3.5) * l.alpha_us + 8 * b * l.beta_us_per_byte + b * l.gamma_us_per_byte);
}

const char* cheapest_alltoall(int n, uint64_t count) {
  const char* best = nullptr;
  double least = 0;
  for (const char* name : {"bruck", "pairwise", "linear"}) {
    const double c = cost_of(name, HCOMM_COLL_ALLTOALL, n, count);
    if (!best || c < least) {
      best = name;
      least = c;
    }
  }
  return best;
}

// Bruck for small blocks on many ranks, linear on few ranks, pairwise for
// large blocks on many.
TEST(ExchangeCosts, AlltoallChoices) {
  EXPECT_STREQ(cheapest_alltoall(32, 1), "bruck");
  EXPECT_STREQ(cheapest_alltoall(4, 1 << 16), "linear");
  EXPECT_STREQ(cheapest_alltoall(32, 1 << 16), "pairwise");
}

// ---------------------------------------------------------------------------
// Errors name the argument.

TEST(ExchangeErrors, AlltoallvWithoutLayoutsIsRejected) {
  const hcomm_algorithm_desc_t* algo = exchange("pairwise", HCOMM_COLL_ALLTOALLV);
  ASSERT_NE(algo, nullptr);
  Call c = plain(HCOMM_COLL_ALLTOALLV, 3, 2);
  set_alltoallv_layout(c);
  const hcomm_comm_view_t comm = comm_view(3, 1);
  struct Missing {
    const char* field;
    void (*spoil)(hcomm_coll_args_t&);
  };
  const Missing cases[] = {
      {"args->recv_counts", [](hcomm_coll_args_t& a) { a.recv_counts = nullptr; }},
      {"args->recv_displs", [](hcomm_coll_args_t& a) { a.recv_displs = nullptr; }},
      {"args->send_counts", [](hcomm_coll_args_t& a) { a.send_counts = nullptr; }},
      {"args->send_displs", [](hcomm_coll_args_t& a) { a.send_displs = nullptr; }},
  };
  for (const Missing& m : cases) {
    hcomm_coll_args_t args = c.args(1);
    m.spoil(args);
    RankSchedule out;
    TestBuilder builder(out, kChunkings[0].rule);
    plugin_error_text().clear();
    EXPECT_EQ(algo->build(&args, &comm, builder.c()), HCOMM_ERR_INVALID_ARGUMENT) << m.field;
    EXPECT_NE(plugin_error_text().find(m.field), std::string::npos) << plugin_error_text();
    EXPECT_TRUE(out.steps.empty());
  }
}

TEST(ExchangeErrors, RootOutsideTheCommunicatorIsRejected) {
  for (hcomm_coll_t coll : {HCOMM_COLL_GATHER, HCOMM_COLL_SCATTER}) {
    const hcomm_algorithm_desc_t* algo = exchange("linear", coll);
    ASSERT_NE(algo, nullptr);
    Call c = plain(coll, 3, 2);
    c.root = 3;
    const hcomm_coll_args_t args = c.args(0);
    const hcomm_comm_view_t comm = comm_view(3, 0);
    RankSchedule out;
    TestBuilder builder(out, kChunkings[0].rule);
    EXPECT_EQ(algo->build(&args, &comm, builder.c()), HCOMM_ERR_INVALID_ARGUMENT);
    EXPECT_NE(plugin_error_text().find("args->root"), std::string::npos) << plugin_error_text();
  }
}

}  // namespace
}  // namespace hcomm::sim
