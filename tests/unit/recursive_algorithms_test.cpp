// The recursive plugin's recursive doubling and halving-doubling, loaded
// from its library: every rank's schedule for sizes 1..17 and 31..33, checked
// and run together in the simulator (recursive_exchange_sim.hpp) against a
// serial reference, over counts below, at and above the number of ranks,
// every chunking, in place on no, all and every other rank, eager and
// rendezvous sends; then schedule shapes, float consistency, costs and errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <random>
#include <span>
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
    {"recursive_doubling", HCOMM_COLL_ALLREDUCE},      {"recursive_doubling", HCOMM_COLL_ALLGATHER},
    {"halving_doubling", HCOMM_COLL_ALLREDUCE},        {"halving_doubling", HCOMM_COLL_REDUCE_SCATTER},
    {"halving_doubling", HCOMM_COLL_REDUCE_SCATTER_V},
};

const hcomm_algorithm_desc_t* recursive(const char* name, hcomm_coll_t coll) {
  std::string why;
  const hcomm_algorithm_desc_t* algo = find_algorithm("recursive", name, coll, &why);
  EXPECT_NE(algo, nullptr) << why;
  return algo;
}

struct Workload {
  hcomm_dtype_t dtype;
  hcomm_op_t op;
};

// The last three serve the largest communicators.
const Workload kReductions[] = {{HCOMM_INT64, HCOMM_SUM},  {HCOMM_INT64, HCOMM_PROD}, {HCOMM_INT64, HCOMM_MIN},
                                {HCOMM_INT64, HCOMM_MAX},  {HCOMM_INT64, HCOMM_AVG},  {HCOMM_FLOAT32, HCOMM_SUM},
                                {HCOMM_FLOAT32, HCOMM_AVG}};
const Workload kMoves[] = {{HCOMM_INT64, HCOMM_SUM}, {HCOMM_FLOAT32, HCOMM_SUM}};

// Fewer counts on the largest communicators, whose schedules take longest.
std::vector<uint64_t> counts(int n) {
  std::vector<uint64_t> out = {0, 1, 3, static_cast<uint64_t>(n + 1)};
  if (n <= 17) out.insert(out.end(), {2, 7, static_cast<uint64_t>(n - 1), 61});
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Block sizes that vary between ranks, zeros among them.
std::vector<size_t> varied_counts(int n, uint64_t count) {
  std::vector<size_t> out;
  for (int r = 0; r < n; ++r) out.push_back((count + 3 * static_cast<uint64_t>(r)) % (count + 2));
  return out;
}

using Param = std::tuple<Algorithm, int>;

class RecursiveAlgorithm : public ::testing::TestWithParam<Param> {};

TEST_P(RecursiveAlgorithm, MatchesTheSerialReference) {
  const auto [which, n] = GetParam();
  const hcomm_algorithm_desc_t* algo = recursive(which.name, which.coll);
  ASSERT_NE(algo, nullptr);
  const bool reduces = which.coll != HCOMM_COLL_ALLGATHER;
  uint32_t seed = 1;
  for (uint64_t count : counts(n))
    for (const std::vector<bool>& in_place : in_place_patterns(n))
      for (const Workload& w : !reduces  ? std::span<const Workload>(kMoves)
                               : n <= 17 ? std::span<const Workload>(kReductions)
                                         : std::span<const Workload>(kReductions).last(3)) {
        SCOPED_TRACE(::testing::Message() << "count " << count << " in place " << pattern_name(in_place) << " dtype "
                                          << w.dtype << " op " << w.op);
        Call c = {.coll = which.coll, .nranks = n, .count = count, .dtype = w.dtype, .op = w.op, .in_place = in_place};
        if (which.coll == HCOMM_COLL_REDUCE_SCATTER_V) c.recv_counts.assign(n, varied_counts(n, count));
        run_typed(*algo, c, seed++);
        if (::testing::Test::HasFailure()) return;
      }
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  const auto [which, n] = info.param;
  const char* coll = which.coll == HCOMM_COLL_ALLREDUCE        ? "allreduce"
                     : which.coll == HCOMM_COLL_ALLGATHER      ? "allgather"
                     : which.coll == HCOMM_COLL_REDUCE_SCATTER ? "reduce_scatter"
                                                               : "reduce_scatter_v";
  return std::string(which.name) + "_" + coll + "_n" + std::to_string(n);
}

INSTANTIATE_TEST_SUITE_P(Sizes, RecursiveAlgorithm,
                         ::testing::Combine(::testing::ValuesIn(kAlgorithms),
                                            ::testing::Values(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 17, 31, 32,
                                                              33)),
                         param_name);

// ---------------------------------------------------------------------------
// Float sums that round: every rank of a recursive-doubling allreduce must
// end with the same bits (partners reduce the same operands in the same
// order), close to the exact sum.

TEST(RecursiveDoublingAllreduce, EveryRankHoldsTheSameBits) {
  const hcomm_algorithm_desc_t* algo = recursive("recursive_doubling", HCOMM_COLL_ALLREDUCE);
  ASSERT_NE(algo, nullptr);
  for (int n : {3, 5, 6, 7, 8, 13}) {
    const uint64_t count = 257;
    const Call c = {.coll = HCOMM_COLL_ALLREDUCE,
                    .nranks = n,
                    .count = count,
                    .dtype = HCOMM_FLOAT32,
                    .op = HCOMM_SUM,
                    .in_place = std::vector<bool>(n, false)};
    const std::vector<RankSchedule> ranks = build_all(*algo, c, kChunkings[1].rule);
    std::vector<RankMemory> memory(n);
    std::mt19937 rng(static_cast<uint32_t>(n));
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    std::vector<double> exact(count, 0.0);
    for (int r = 0; r < n; ++r) {
      memory[r].input.resize(count * 4);
      memory[r].output.assign(count * 4, 0);
      memory[r].scratch.assign(ranks[r].scratch, 0);
      for (uint64_t i = 0; i < count; ++i) {
        const float v = value(rng) * std::pow(10.0f, static_cast<float>(r % 4));
        store(memory[r].input.data(), i, v);
        exact[i] += v;
      }
    }
    Simulator sim(ranks, c, memory, 7, false);
    sim.run();
    ASSERT_EQ(sim.unfinished(), "");
    for (int r = 1; r < n; ++r) EXPECT_TRUE(memory[r].output == memory[0].output) << "n " << n << " rank " << r;
    for (uint64_t i = 0; i < count; ++i)
      EXPECT_NEAR(load<float>(memory[0].output.data(), i), exact[i], 1e-3 * (1 + std::fabs(exact[i]))) << i;
  }
}

// ---------------------------------------------------------------------------
// Schedule shapes.

// The bytes a rank sends, and its sends.
std::pair<uint64_t, int> sent(const RankSchedule& s) {
  uint64_t bytes = 0;
  int sends = 0;
  for (const hcomm_step_t& step : s.steps)
    if (step.kind == HCOMM_STEP_SEND) {
      bytes += step.bytes;
      ++sends;
    }
  return {bytes, sends};
}

Call plain(hcomm_coll_t coll, int n, uint64_t count) {
  return {.coll = coll, .nranks = n, .count = count, .in_place = std::vector<bool>(n, false)};
}

TEST(RecursiveDoublingSchedule, SendsTheWholeVectorOncePerRound) {
  const hcomm_algorithm_desc_t* algo = recursive("recursive_doubling", HCOMM_COLL_ALLREDUCE);
  ASSERT_NE(algo, nullptr);
  const auto ranks = build_all(*algo, plain(HCOMM_COLL_ALLREDUCE, 8, 100), kChunkings[0].rule);
  for (int r = 0; r < 8; ++r) EXPECT_EQ(sent(ranks[r]), std::make_pair(uint64_t{3 * 800}, 3)) << "rank " << r;
  // n = 6: ranks 0 and 2 hand their vector over and get the result back.
  const auto folded = build_all(*algo, plain(HCOMM_COLL_ALLREDUCE, 6, 100), kChunkings[0].rule);
  for (int r = 0; r < 6; ++r) {
    const bool out = r == 0 || r == 2, in = r == 1 || r == 3;
    EXPECT_EQ(sent(folded[r]).second, out ? 1 : in ? 3 : 2) << "rank " << r;
  }
}

// Partners combine the same operands in the same order: the lower group's
// value (this rank's partial result when its group is the lower) first.
TEST(RecursiveDoublingSchedule, LowerGroupIsTheFirstOperand) {
  const hcomm_algorithm_desc_t* algo = recursive("recursive_doubling", HCOMM_COLL_ALLREDUCE);
  ASSERT_NE(algo, nullptr);
  for (int n : {2, 4, 6, 8}) {
    const auto ranks = build_all(*algo, plain(HCOMM_COLL_ALLREDUCE, n, 10), kChunkings[0].rule);
    for (int r = 0; r < n; ++r) {
      int peer = -1;
      for (const hcomm_step_t& s : ranks[r].steps) {
        if (s.kind == HCOMM_STEP_RECV && s.match < 32) peer = s.peer;
        if (s.kind != HCOMM_STEP_REDUCE) continue;
        ASSERT_GE(peer, 0) << "n " << n << " rank " << r << ": a reduction before its receive";
        EXPECT_EQ(s.src.buffer != HCOMM_BUF_SCRATCH, r < peer) << "n " << n << " rank " << r << " peer " << peer;
        EXPECT_EQ(s.src2.buffer == HCOMM_BUF_SCRATCH, r < peer) << "n " << n << " rank " << r << " peer " << peer;
      }
    }
  }
}

// Halving-doubling moves 2(p-1)/p of the vector, in 2 log2 p messages.
TEST(HalvingDoublingSchedule, MovesTwiceTheVectorLessOneShare) {
  const hcomm_algorithm_desc_t* algo = recursive("halving_doubling", HCOMM_COLL_ALLREDUCE);
  ASSERT_NE(algo, nullptr);
  const auto ranks = build_all(*algo, plain(HCOMM_COLL_ALLREDUCE, 8, 800), kChunkings[0].rule);
  for (int r = 0; r < 8; ++r) EXPECT_EQ(sent(ranks[r]), std::make_pair(uint64_t{2 * 7 * 800}, 6)) << "rank " << r;
  const hcomm_algorithm_desc_t* rs = recursive("halving_doubling", HCOMM_COLL_REDUCE_SCATTER);
  ASSERT_NE(rs, nullptr);
  const auto scattered = build_all(*rs, plain(HCOMM_COLL_REDUCE_SCATTER, 8, 100), kChunkings[0].rule);
  for (int r = 0; r < 8; ++r) EXPECT_EQ(sent(scattered[r]), std::make_pair(uint64_t{7 * 800}, 3)) << "rank " << r;
}

// The first doubling send carries the part the last halving round reduced,
// chunk by chunk as each is reduced (as ring's allgather forwards), not once
// the whole part is.
TEST(HalvingDoublingSchedule, FirstDoublingSendFollowsTheLastReductionChunkByChunk) {
  const hcomm_algorithm_desc_t* algo = recursive("halving_doubling", HCOMM_COLL_ALLREDUCE);
  ASSERT_NE(algo, nullptr);
  for (int n : {2, 3, 4, 5, 8}) {
    const auto ranks = build_all(*algo, plain(HCOMM_COLL_ALLREDUCE, n, 1000), kChunkings[3].rule);
    int checked = 0;
    for (int r = 0; r < n; ++r) {
      const std::vector<hcomm_step_t>& steps = ranks[r].steps;
      int32_t reduced = -1;
      for (size_t i = 0; i < steps.size(); ++i)
        if (steps[i].kind == HCOMM_STEP_RECV_REDUCE && (steps[i].flags & HCOMM_STEP_FINAL))
          reduced = static_cast<int32_t>(i);
      if (reduced < 0) continue;  // folded out: its partner reduces for it
      const auto send = std::find_if(steps.begin() + reduced, steps.end(),
                                     [](const hcomm_step_t& s) { return s.kind == HCOMM_STEP_SEND; });
      ASSERT_NE(send, steps.end()) << "n " << n << " rank " << r;
      EXPECT_EQ(send->src.offset, steps[reduced].dst.offset) << "n " << n << " rank " << r;
      EXPECT_EQ(send->nchunks, steps[reduced].nchunks) << "n " << n << " rank " << r;
      bool chunkwise = false;
      for (uint32_t d = 0; d < send->ndeps; ++d)
        chunkwise |= send->deps[d] == reduced && !(send->whole_deps & (1u << d));
      EXPECT_TRUE(chunkwise) << "n " << n << " rank " << r;
      ++checked;
    }
    EXPECT_GE(checked, n / 2) << "n " << n;
  }
}

// ---------------------------------------------------------------------------
// Costs: the alpha-beta-gamma model of each schedule.

double cost_of(const char* name, hcomm_coll_t coll, int n, uint64_t count) {
  const hcomm_algorithm_desc_t* algo = recursive(name, coll);
  if (!algo) return -1;
  const Call c = plain(coll, n, count);
  const hcomm_coll_args_t args = c.args(0);
  const hcomm_comm_view_t comm = comm_view(n, 0);
  return algo->cost(&args, &comm);
}

TEST(RecursiveCosts, FollowTheLinkModel) {
  const hcomm_link_model_t l = comm_view(1, 0).link;
  const double m = 8000;  // 1000 int64
  const double round = l.alpha_us + m * (l.beta_us_per_byte + l.gamma_us_per_byte);
  EXPECT_DOUBLE_EQ(cost_of("recursive_doubling", HCOMM_COLL_ALLREDUCE, 8, 1000), 3 * round);
  EXPECT_DOUBLE_EQ(cost_of("recursive_doubling", HCOMM_COLL_ALLREDUCE, 6, 1000),
                   2 * round + round + l.alpha_us + m * l.beta_us_per_byte);
  EXPECT_DOUBLE_EQ(cost_of("recursive_doubling", HCOMM_COLL_ALLREDUCE, 1, 1000), m * l.gamma_us_per_byte);
  EXPECT_DOUBLE_EQ(cost_of("recursive_doubling", HCOMM_COLL_ALLGATHER, 4, 1000),
                   2 * l.alpha_us + 3 * m * l.beta_us_per_byte);
  EXPECT_DOUBLE_EQ(cost_of("halving_doubling", HCOMM_COLL_ALLREDUCE, 8, 1000),
                   2 * (3 * l.alpha_us + m * 7 / 8 * l.beta_us_per_byte) + m * 7 / 8 * l.gamma_us_per_byte);
  EXPECT_DOUBLE_EQ(cost_of("halving_doubling", HCOMM_COLL_REDUCE_SCATTER, 4, 1000),
                   2 * l.alpha_us + 4 * m * 3 / 4 * (l.beta_us_per_byte + l.gamma_us_per_byte));
}

// Few elements: recursive doubling's fewer messages win; many: halving-doubling's fewer bytes.
TEST(RecursiveCosts, RecursiveDoublingForSmallHalvingDoublingForLarge) {
  for (int n : {4, 7, 16}) {
    EXPECT_LT(cost_of("recursive_doubling", HCOMM_COLL_ALLREDUCE, n, 1),
              cost_of("halving_doubling", HCOMM_COLL_ALLREDUCE, n, 1))
        << n;
    EXPECT_GT(cost_of("recursive_doubling", HCOMM_COLL_ALLREDUCE, n, 1 << 20),
              cost_of("halving_doubling", HCOMM_COLL_ALLREDUCE, n, 1 << 20))
        << n;
  }
}

// ---------------------------------------------------------------------------
// Errors name the argument.

TEST(RecursiveErrors, ReduceScatterVWithoutCountsIsRejected) {
  const hcomm_algorithm_desc_t* algo = recursive("halving_doubling", HCOMM_COLL_REDUCE_SCATTER_V);
  ASSERT_NE(algo, nullptr);
  const hcomm_coll_args_t args = plain(HCOMM_COLL_REDUCE_SCATTER_V, 4, 0).args(1);
  const hcomm_comm_view_t comm = comm_view(4, 1);
  RankSchedule out;
  TestBuilder builder(out, kChunkings[0].rule);
  EXPECT_EQ(algo->build(&args, &comm, builder.c()), HCOMM_ERR_INVALID_ARGUMENT);
  EXPECT_NE(plugin_error_text().find("args->recv_counts"), std::string::npos) << plugin_error_text();
}

TEST(RecursiveErrors, WrongCollectiveIsRejected) {
  const hcomm_algorithm_desc_t* algo = recursive("recursive_doubling", HCOMM_COLL_ALLGATHER);
  ASSERT_NE(algo, nullptr);
  const hcomm_coll_args_t args = plain(HCOMM_COLL_ALLREDUCE, 4, 3).args(0);
  const hcomm_comm_view_t comm = comm_view(4, 0);
  RankSchedule out;
  TestBuilder builder(out, kChunkings[0].rule);
  EXPECT_EQ(algo->build(&args, &comm, builder.c()), HCOMM_ERR_INVALID_ARGUMENT);
  EXPECT_NE(plugin_error_text().find("args->coll"), std::string::npos) << plugin_error_text();
  EXPECT_TRUE(out.steps.empty());
}

}  // namespace
}  // namespace hcomm::sim
