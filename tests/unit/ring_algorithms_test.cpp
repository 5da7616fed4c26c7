// The ring plugin's algorithms, as the core loads them: the exact steps of
// small cases, the cost estimates, bad arguments, and every collective run by
// the core's executor over in-memory messages that are delivered late and in
// any order, every element of every rank's memory compared with a serial
// reference (outputs written, inputs and gaps left alone).
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "core/algorithm/layout.hpp"
#include "core/algorithm/selector.hpp"
#include "core/common/error.hpp"
#include "core/exec/operation.hpp"

namespace hcomm {
namespace {

const hcomm_algorithm_desc_t* ring(hcomm_coll_t coll) {
  for (const hcomm_algorithm_desc_t* a : algorithm::registry())
    if (std::string(a->name) == "ring" && (a->colls & (1u << coll))) return a;
  return nullptr;
}

#define ASSERT_RING(var, coll)                    \
  const hcomm_algorithm_desc_t* var = ring(coll); \
  ASSERT_NE(var, nullptr) << "no ring algorithm for collective " << (coll)

const hcomm_link_model_t kLink = {.alpha_us = 5.0, .beta_us_per_byte = 1e-4, .gamma_us_per_byte = 2e-5};

constexpr uint64_t kChunkBytes = 512 << 10;

hcomm_comm_view_t comm_view(int nranks, int rank) {
  return {.size = sizeof(hcomm_comm_view_t), .rank = rank, .nranks = nranks, .link = kLink, .chunk_bytes = kChunkBytes};
}

bool variable(hcomm_coll_t coll) { return coll == HCOMM_COLL_ALLGATHERV || coll == HCOMM_COLL_REDUCE_SCATTER_V; }

// The call as the core's API makes it; `counts` and `displs` only for the
// variable-size collectives.
hcomm_coll_args_t coll_args(hcomm_coll_t coll, uint64_t count, hcomm_dtype_t dtype, hcomm_op_t op, int root,
                            bool in_place, const std::vector<size_t>* counts = nullptr,
                            const std::vector<size_t>* displs = nullptr) {
  return {.size = sizeof(hcomm_coll_args_t),
          .coll = coll,
          .count = count,
          .dtype = dtype,
          .dtype_size = dtype == HCOMM_FLOAT32 ? 4u : 8u,
          .op = op,
          .root = root,
          .in_place = in_place ? 1 : 0,
          .mem_kind = HCOMM_MEM_HOST,
          .recv_counts = variable(coll) && counts ? counts->data() : nullptr,
          .recv_displs = variable(coll) && displs ? displs->data() : nullptr};
}

// ---------------------------------------------------------------------------
// Building: the core's builder callbacks with a chosen chunk rule, then the
// executor's own checks of each schedule (buffer bounds, dependencies, chunk
// counts, match ids), and the checks across ranks.

using ChunkRule = uint32_t (*)(uint64_t bytes, size_t elem_size);

struct Chunking {
  const char* name;
  ChunkRule rule;
};

const Chunking kChunkings[] = {
    {"whole", [](uint64_t, size_t) { return 1u; }},
    {"24B", [](uint64_t bytes, size_t) { return static_cast<uint32_t>((bytes + 23) / 24); }},
    {"element", [](uint64_t bytes, size_t elem) { return static_cast<uint32_t>(bytes / elem); }},
};

using Schedules = std::vector<std::shared_ptr<exec::Schedule>>;

// Every rank's schedule for `args_of(rank)`; adds a failure and returns an
// empty list when a build fails or a schedule breaks a rule.
template <class ArgsOf>
Schedules build_all(const hcomm_algorithm_desc_t& algo, int nranks, ChunkRule rule, ArgsOf args_of) {
  struct Context {
    exec::Schedule* schedule;
    ChunkRule rule;
  };
  Schedules out;
  for (int rank = 0; rank < nranks; ++rank) {
    const hcomm_coll_args_t args = args_of(rank);
    auto schedule = std::make_shared<exec::Schedule>();
    schedule->algorithm = algo.name;
    schedule->args = args;
    Context ctx{schedule.get(), rule};
    hcomm_schedule_builder_t builder = {
        .ctx = &ctx,
        .add =
            [](hcomm_schedule_builder_t* b, const hcomm_step_t* step) {
              auto* steps = &static_cast<Context*>(b->ctx)->schedule->steps;
              steps->push_back(*step);
              return static_cast<int32_t>(steps->size() - 1);
            },
        .need_scratch =
            [](hcomm_schedule_builder_t* b, uint64_t bytes) {
              exec::Schedule* s = static_cast<Context*>(b->ctx)->schedule;
              s->algorithm_scratch = std::max(s->algorithm_scratch, bytes);
            },
        .chunks_for = [](hcomm_schedule_builder_t* b, uint64_t bytes,
                         size_t elem) { return static_cast<Context*>(b->ctx)->rule(bytes, elem); },
    };
    const hcomm_comm_view_t view = comm_view(nranks, rank);
    if (algo.build(&args, &view, &builder) != HCOMM_SUCCESS) {
      ADD_FAILURE() << "rank " << rank << ": " << last_error();
      return {};
    }
    try {
      exec::finalize_schedule(*schedule, algorithm::send_bytes(args, nranks, rank),
                              algorithm::recv_bytes(args, nranks, rank));
    } catch (const Error& e) {
      ADD_FAILURE() << "rank " << rank << ": " << e.what();
      return {};
    }
    out.push_back(schedule);
  }
  return out;
}

bool is_transfer(uint32_t kind) { return kind <= HCOMM_STEP_RECV_REDUCE; }

// The rules between ranks: each send meets exactly one receive (peer and
// match) of the same bytes and chunks; nothing writes SEND; peers are others.
std::vector<std::string> cross_rank_problems(const Schedules& ranks) {
  std::vector<std::string> problems;
  std::map<std::tuple<int, int, uint32_t>, std::vector<const hcomm_step_t*>> sends, recvs;  // from, to, match
  for (int r = 0; r < static_cast<int>(ranks.size()); ++r)
    for (size_t i = 0; i < ranks[r]->steps.size(); ++i) {
      const hcomm_step_t& s = ranks[r]->steps[i];
      const std::string where = "rank " + std::to_string(r) + " step " + std::to_string(i) + ": ";
      if (s.kind != HCOMM_STEP_SEND && s.dst.buffer == HCOMM_BUF_SEND) problems.push_back(where + "writes SEND");
      if (!is_transfer(s.kind)) continue;
      if (s.peer < 0 || s.peer >= static_cast<int>(ranks.size()) || s.peer == r)
        problems.push_back(where + "peer " + std::to_string(s.peer));
      if (s.kind == HCOMM_STEP_SEND)
        sends[{r, s.peer, s.match}].push_back(&s);
      else
        recvs[{s.peer, r, s.match}].push_back(&s);
    }
  auto pair_name = [](const std::tuple<int, int, uint32_t>& k) {
    return std::to_string(std::get<0>(k)) + " -> " + std::to_string(std::get<1>(k)) + " match " +
           std::to_string(std::get<2>(k)) + ": ";
  };
  for (const auto& [key, list] : recvs)
    if (!sends.count(key)) problems.push_back(pair_name(key) + "a receive without a send");
  for (const auto& [key, list] : sends) {
    const auto it = recvs.find(key);
    if (list.size() != 1 || it == recvs.end() || it->second.size() != 1) {
      problems.push_back(pair_name(key) + std::to_string(list.size()) + " sends, " +
                         std::to_string(it == recvs.end() ? 0 : it->second.size()) + " receives");
      continue;
    }
    const hcomm_step_t& send = *list[0];
    const hcomm_step_t& recv = *it->second[0];
    if (send.bytes != recv.bytes || send.nchunks != recv.nchunks)
      problems.push_back(pair_name(key) + "send of " + std::to_string(send.bytes) + " bytes in " +
                         std::to_string(send.nchunks) + " chunks, receive of " + std::to_string(recv.bytes) + " in " +
                         std::to_string(recv.nchunks));
  }
  return problems;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (size_t i = 0; i < lines.size() && i < 10; ++i) out += "\n  " + lines[i];
  if (lines.size() > 10) out += "\n  ... " + std::to_string(lines.size() - 10) + " more";
  return out;
}

// ---------------------------------------------------------------------------
// The exact steps of small cases, one line per step.

std::string ref(const hcomm_bufref_t& r) {
  const char* names[] = {"S", "R", "X"};  // send, receive, scratch
  return (r.buffer < 3 ? names[r.buffer] : "?") + std::to_string(r.offset);
}

std::string describe(const hcomm_step_t& s) {
  std::string out;
  switch (s.kind) {
    case HCOMM_STEP_SEND:
      out = "send >" + std::to_string(s.peer) + " m" + std::to_string(s.match) + " " + ref(s.src);
      break;
    case HCOMM_STEP_RECV:
      out = "recv <" + std::to_string(s.peer) + " m" + std::to_string(s.match) + " " + ref(s.dst);
      break;
    case HCOMM_STEP_RECV_REDUCE:
      out = "recv-reduce <" + std::to_string(s.peer) + " m" + std::to_string(s.match) + " " + ref(s.src) + " -> " +
            ref(s.dst);
      break;
    case HCOMM_STEP_COPY:
      out = "copy " + ref(s.src) + " -> " + ref(s.dst);
      break;
    default:
      out = "kind " + std::to_string(s.kind);
  }
  out += " " + std::to_string(s.bytes) + "B/" + std::to_string(s.nchunks);
  for (uint32_t d = 0; d < s.ndeps; ++d)
    out += (s.whole_deps & (1u << d) ? " after all " : " after ") + std::to_string(s.deps[d]);
  if (s.flags & HCOMM_STEP_FINAL) out += " final";
  return out;
}

// Two chunks wherever a transfer has two elements or more.
constexpr ChunkRule kTwoChunks = [](uint64_t, size_t) { return 2u; };

void expect_steps(const Schedules& ranks, const std::vector<std::vector<std::string>>& want) {
  ASSERT_EQ(ranks.size(), want.size());
  for (size_t r = 0; r < want.size(); ++r) {
    std::vector<std::string> got;
    for (const hcomm_step_t& s : ranks[r]->steps) got.push_back(describe(s));
    EXPECT_EQ(got, want[r]) << "rank " << r;
  }
}

template <class ArgsOf>
Schedules built_checked(hcomm_coll_t coll, int nranks, ChunkRule rule, ArgsOf args_of) {
  const hcomm_algorithm_desc_t* algo = ring(coll);
  if (!algo) {
    ADD_FAILURE() << "no ring algorithm for collective " << coll;
    return {};
  }
  Schedules ranks = build_all(*algo, nranks, rule, args_of);
  const std::vector<std::string> problems = cross_rank_problems(ranks);
  EXPECT_TRUE(problems.empty()) << joined(problems);
  return ranks;
}

// Blocks of 16 bytes (two int64) at R0, R16, R32: each rank copies its own,
// sends it at step 0, then forwards the block it received, chunk by chunk.
TEST(RingSchedule, AllgatherForwardsEachBlockAsItArrives) {
  const auto ranks = built_checked(HCOMM_COLL_ALLGATHER, 3, kTwoChunks, [](int) {
    return coll_args(HCOMM_COLL_ALLGATHER, 2, HCOMM_INT64, HCOMM_SUM, 0, false);
  });
  expect_steps(ranks, {{"copy S0 -> R0 16B/1", "send >1 m0 S0 16B/2", "recv <2 m0 R32 16B/2",
                        "send >1 m1 R32 16B/2 after 2", "recv <2 m1 R16 16B/2"},
                       {"copy S0 -> R16 16B/1", "send >2 m0 S0 16B/2", "recv <0 m0 R0 16B/2",
                        "send >2 m1 R0 16B/2 after 2", "recv <0 m1 R32 16B/2"},
                       {"copy S0 -> R32 16B/1", "send >0 m0 S0 16B/2", "recv <1 m0 R16 16B/2",
                        "send >0 m1 R16 16B/2 after 2", "recv <1 m1 R0 16B/2"}});
}

// Rank 1 contributes nothing: no transfer carries its block, on either end.
// Blocks lie in reverse rank order; each has its own chunk count.
TEST(RingSchedule, AllgathervSkipsEmptyBlocksOnBothEnds) {
  const std::vector<size_t> counts = {3, 0, 1}, displs = {1, 9, 0};
  const auto ranks = built_checked(HCOMM_COLL_ALLGATHERV, 3, kTwoChunks, [&](int) {
    return coll_args(HCOMM_COLL_ALLGATHERV, 0, HCOMM_INT64, HCOMM_SUM, 0, true, &counts, &displs);
  });
  expect_steps(ranks, {{"send >1 m0 S0 24B/2", "recv <2 m0 R0 8B/1", "send >1 m1 R0 8B/1 after 1"},
                       {"recv <0 m0 R8 24B/2", "send >2 m1 R8 24B/2 after 0", "recv <0 m1 R0 8B/1"},
                       {"send >0 m0 S0 8B/1", "recv <1 m1 R8 24B/2"}});
}

// Block b starts at rank b + 1 and ends, reduced by every rank, in rank b's
// RECV; the partial sum in between lives in SCRATCH, never in SEND.
TEST(RingSchedule, ReduceScatterReducesIntoScratchThenRecv) {
  for (bool in_place : {false, true}) {
    SCOPED_TRACE(in_place ? "in place" : "apart");
    const auto ranks = built_checked(HCOMM_COLL_REDUCE_SCATTER, 3, kTwoChunks, [&](int) {
      return coll_args(HCOMM_COLL_REDUCE_SCATTER, 2, HCOMM_INT64, HCOMM_AVG, 0, in_place);
    });
    expect_steps(ranks, {{"send >1 m0 S32 16B/2", "recv-reduce <2 m0 S16 -> X0 16B/2", "send >1 m1 X0 16B/2 after 1",
                          "recv-reduce <2 m1 S0 -> R0 16B/2 final"},
                         {"send >2 m0 S0 16B/2", "recv-reduce <0 m0 S32 -> X0 16B/2", "send >2 m1 X0 16B/2 after 1",
                          "recv-reduce <0 m1 S16 -> R0 16B/2 final"},
                         {"send >0 m0 S16 16B/2", "recv-reduce <1 m0 S0 -> X0 16B/2", "send >0 m1 X0 16B/2 after 1",
                          "recv-reduce <1 m1 S32 -> R0 16B/2 final"}});
    for (const auto& s : ranks) EXPECT_EQ(s->algorithm_scratch, 16u);
  }
}

// root -> root + 1 -> ... -> root - 1; the root copies beside its send.
TEST(RingSchedule, BroadcastIsAChainFromTheRoot) {
  const auto ranks = built_checked(HCOMM_COLL_BROADCAST, 4, kTwoChunks, [](int rank) {
    return coll_args(HCOMM_COLL_BROADCAST, 5, HCOMM_INT64, HCOMM_SUM, 1, rank != 1);
  });
  expect_steps(ranks, {{"recv <3 m0 R0 40B/2"},
                       {"copy S0 -> R0 40B/1", "send >2 m0 S0 40B/2"},
                       {"recv <1 m0 R0 40B/2", "send >3 m0 R0 40B/2 after 0"},
                       {"recv <2 m0 R0 40B/2", "send >0 m0 R0 40B/2 after 0"}});
}

// root + 1 -> ... -> root: partial results in SCRATCH, only the root's RECV.
TEST(RingSchedule, ReduceIsAChainTowardTheRoot) {
  const auto ranks = built_checked(HCOMM_COLL_REDUCE, 4, kTwoChunks, [](int) {
    return coll_args(HCOMM_COLL_REDUCE, 5, HCOMM_INT64, HCOMM_SUM, 1, false);
  });
  expect_steps(ranks, {{"recv-reduce <3 m0 S0 -> X0 40B/2", "send >1 m0 X0 40B/2 after 0"},
                       {"recv-reduce <0 m0 S0 -> R0 40B/2 final"},
                       {"send >3 m0 S0 40B/2"},
                       {"recv-reduce <2 m0 S0 -> X0 40B/2", "send >0 m0 X0 40B/2 after 0"}});
  const uint64_t scratch[] = {40, 0, 0, 40};
  for (int r = 0; r < 4; ++r) EXPECT_EQ(ranks[r]->algorithm_scratch, scratch[r]) << "rank " << r;
}

TEST(RingSchedule, LoneRankCopiesUnlessInPlace) {
  const std::vector<size_t> counts = {3}, displs = {2};
  for (hcomm_coll_t coll : {HCOMM_COLL_ALLGATHER, HCOMM_COLL_ALLGATHERV, HCOMM_COLL_REDUCE_SCATTER,
                            HCOMM_COLL_REDUCE_SCATTER_V, HCOMM_COLL_BROADCAST, HCOMM_COLL_REDUCE}) {
    SCOPED_TRACE(coll);
    const uint64_t count = variable(coll) ? 0 : 3;
    const std::string dst = coll == HCOMM_COLL_ALLGATHERV ? "R16" : "R0";
    for (bool in_place : {false, true}) {
      const auto ranks = built_checked(coll, 1, kTwoChunks, [&](int) {
        return coll_args(coll, count, HCOMM_INT64, HCOMM_SUM, 0, in_place, &counts, &displs);
      });
      expect_steps(ranks,
                   {in_place ? std::vector<std::string>{} : std::vector<std::string>{"copy S0 -> " + dst + " 24B/1"}});
    }
  }
}

TEST(RingSchedule, NoDataNoSteps) {
  const std::vector<size_t> counts(5, 0), displs(5, 0);
  for (hcomm_coll_t coll :
       {HCOMM_COLL_ALLREDUCE, HCOMM_COLL_ALLGATHER, HCOMM_COLL_ALLGATHERV, HCOMM_COLL_REDUCE_SCATTER,
        HCOMM_COLL_REDUCE_SCATTER_V, HCOMM_COLL_BROADCAST, HCOMM_COLL_REDUCE}) {
    const auto ranks = built_checked(coll, 5, kTwoChunks, [&](int) {
      return coll_args(coll, 0, HCOMM_INT64, HCOMM_SUM, 2, false, &counts, &displs);
    });
    ASSERT_EQ(ranks.size(), 5u) << coll;
    for (const auto& s : ranks) EXPECT_TRUE(s->steps.empty()) << coll;
  }
}

// ---------------------------------------------------------------------------
// Costs: what each schedule does, in the link model's terms, the same on
// every rank whether or not it calls in place (ranks must agree on a pick).

double cost_of(hcomm_coll_t coll, const hcomm_coll_args_t& args, int nranks, int rank = 0) {
  const hcomm_algorithm_desc_t* algo = ring(coll);
  if (!algo) {
    ADD_FAILURE() << "no ring algorithm for collective " << coll;
    return 0;
  }
  const hcomm_comm_view_t view = comm_view(nranks, rank);
  return algo->cost(&args, &view);
}

// The chunk count the core gives `bytes` of int64 on the view's communicator.
double chunks_of(uint64_t bytes) { return hcomm_chunk_count(bytes, 8, kChunkBytes); }

TEST(RingCost, FollowsTheSchedules) {
  const double a = kLink.alpha_us, b = kLink.beta_us_per_byte, g = kLink.gamma_us_per_byte;
  auto args = [](hcomm_coll_t coll, uint64_t count) {
    return coll_args(coll, count, HCOMM_INT64, HCOMM_SUM, 0, false);
  };
  // Ring passes of n - 1 steps over blocks of B/n (B = 4 * 1000 * 8).
  EXPECT_DOUBLE_EQ(cost_of(HCOMM_COLL_ALLGATHER, args(HCOMM_COLL_ALLGATHER, 1000), 4), 3 * (a + 8000 * b));
  EXPECT_DOUBLE_EQ(cost_of(HCOMM_COLL_REDUCE_SCATTER, args(HCOMM_COLL_REDUCE_SCATTER, 1000), 4),
                   3 * (a + 8000 * (b + g)));
  // Uneven blocks: the busiest link carries all but the smallest.
  const std::vector<size_t> counts = {10, 0, 30, 20}, displs = {0, 10, 10, 40};
  EXPECT_DOUBLE_EQ(cost_of(HCOMM_COLL_ALLGATHERV,
                           coll_args(HCOMM_COLL_ALLGATHERV, 0, HCOMM_INT64, HCOMM_SUM, 0, false, &counts, &displs), 4),
                   3 * a + 480 * b);
  EXPECT_DOUBLE_EQ(cost_of(HCOMM_COLL_REDUCE_SCATTER_V,
                           coll_args(HCOMM_COLL_REDUCE_SCATTER_V, 0, HCOMM_INT64, HCOMM_SUM, 0, false, &counts), 4),
                   3 * a + 480 * (b + g));
  // Chains of n ranks and k chunks: (n - 1 + k - 1) chunk times.
  const uint64_t bytes = 4u << 20;
  const double k = chunks_of(bytes);
  EXPECT_DOUBLE_EQ(cost_of(HCOMM_COLL_BROADCAST, args(HCOMM_COLL_BROADCAST, bytes / 8), 5),
                   (4 + k - 1) * (a + bytes / k * b));
  EXPECT_DOUBLE_EQ(cost_of(HCOMM_COLL_REDUCE, args(HCOMM_COLL_REDUCE, bytes / 8), 5),
                   (4 + k - 1) * (a + bytes / k * (b + g)));
  EXPECT_DOUBLE_EQ(cost_of(HCOMM_COLL_BROADCAST, args(HCOMM_COLL_BROADCAST, 1), 3), 2 * (a + 8 * b));
  // A lone rank copies, unless in place.
  EXPECT_DOUBLE_EQ(cost_of(HCOMM_COLL_REDUCE, args(HCOMM_COLL_REDUCE, 100), 1), 800 * g);
  EXPECT_DOUBLE_EQ(
      cost_of(HCOMM_COLL_ALLGATHER, coll_args(HCOMM_COLL_ALLGATHER, 9, HCOMM_INT64, HCOMM_SUM, 0, true), 1), 0.0);
}

TEST(RingCost, AlikeOnEveryRankInPlaceOrNot) {
  for (hcomm_coll_t coll : {HCOMM_COLL_ALLREDUCE, HCOMM_COLL_ALLGATHER, HCOMM_COLL_REDUCE_SCATTER, HCOMM_COLL_BROADCAST,
                            HCOMM_COLL_REDUCE}) {
    const double first = cost_of(coll, coll_args(coll, 5000, HCOMM_FLOAT32, HCOMM_SUM, 2, false), 5, 0);
    EXPECT_GT(first, 0.0) << coll;
    for (int rank = 0; rank < 5; ++rank)
      for (bool in_place : {false, true})
        EXPECT_EQ(cost_of(coll, coll_args(coll, 5000, HCOMM_FLOAT32, HCOMM_SUM, 2, in_place), 5, rank), first)
            << coll << " rank " << rank << (in_place ? " in place" : "");
  }
}

// Bigger messages make the chain beat the binomial tree's log2 n full sends.
TEST(RingCost, ChainBroadcastWinsForLargeMessagesOnFewRanks) {
  const hcomm_comm_view_t view = comm_view(4, 0);
  const hcomm_algorithm_desc_t* chain = ring(HCOMM_COLL_BROADCAST);
  ASSERT_NE(chain, nullptr);
  const hcomm_coll_args_t large = coll_args(HCOMM_COLL_BROADCAST, 8u << 20, HCOMM_INT64, HCOMM_SUM, 0, true);
  const hcomm_coll_args_t small = coll_args(HCOMM_COLL_BROADCAST, 1, HCOMM_INT64, HCOMM_SUM, 0, true);
  const double tree_large = 2 * (kLink.alpha_us + (64u << 20) * kLink.beta_us_per_byte);
  const double tree_small = 2 * (kLink.alpha_us + 8 * kLink.beta_us_per_byte);
  EXPECT_LT(chain->cost(&large, &view), tree_large);
  EXPECT_GT(chain->cost(&small, &view), tree_small);
}

// ---------------------------------------------------------------------------
// Registration and bad input.

TEST(RingAlgorithms, OneDescriptorPerCollective) {
  const std::pair<hcomm_coll_t, int> served[] = {
      {HCOMM_COLL_ALLREDUCE, 1 << 23},      {HCOMM_COLL_ALLGATHER, 1 << 24},        {HCOMM_COLL_ALLGATHERV, 1 << 24},
      {HCOMM_COLL_REDUCE_SCATTER, 1 << 24}, {HCOMM_COLL_REDUCE_SCATTER_V, 1 << 24}, {HCOMM_COLL_BROADCAST, INT_MAX},
      {HCOMM_COLL_REDUCE, INT_MAX}};
  for (const auto& [coll, max_ranks] : served) {
    ASSERT_RING(algo, coll);
    EXPECT_EQ(algo->colls, 1u << coll);
    EXPECT_EQ(algo->max_ranks, max_ranks) << coll << ": match ids (step numbers) must stay below 2^24";
    EXPECT_EQ(algo->min_ranks, 1);
    EXPECT_EQ(algo->max_bytes, UINT64_MAX);
  }
  EXPECT_EQ(ring(HCOMM_COLL_ALLTOALL), nullptr);
}

TEST(RingAlgorithms, RejectBadArgumentsByName) {
  const std::vector<size_t> counts = {1, 2, 3};
  struct Bad {
    hcomm_coll_t coll;
    hcomm_coll_args_t args;
    const char* named;
  };
  hcomm_coll_args_t wrong = coll_args(HCOMM_COLL_ALLGATHERV, 0, HCOMM_INT64, HCOMM_SUM, 0, false, &counts, &counts);
  const Bad cases[] = {
      {HCOMM_COLL_ALLGATHERV, coll_args(HCOMM_COLL_ALLGATHERV, 0, HCOMM_INT64, HCOMM_SUM, 0, false),
       "args->recv_counts"},
      {HCOMM_COLL_ALLGATHERV, coll_args(HCOMM_COLL_ALLGATHERV, 0, HCOMM_INT64, HCOMM_SUM, 0, false, &counts),
       "args->recv_displs"},
      {HCOMM_COLL_REDUCE_SCATTER_V, coll_args(HCOMM_COLL_REDUCE_SCATTER_V, 0, HCOMM_INT64, HCOMM_SUM, 0, false),
       "args->recv_counts"},
      {HCOMM_COLL_BROADCAST, coll_args(HCOMM_COLL_BROADCAST, 4, HCOMM_INT64, HCOMM_SUM, 3, false), "args->root"},
      {HCOMM_COLL_REDUCE, coll_args(HCOMM_COLL_REDUCE, 4, HCOMM_INT64, HCOMM_SUM, -1, false), "args->root"},
      {HCOMM_COLL_ALLGATHER, wrong, "args->coll"},
  };
  for (const Bad& bad : cases) {
    SCOPED_TRACE(bad.named);
    ASSERT_RING(algo, bad.coll);
    std::vector<hcomm_step_t> steps;
    hcomm_schedule_builder_t builder = {
        .ctx = &steps,
        .add =
            [](hcomm_schedule_builder_t* b, const hcomm_step_t* s) {
              static_cast<std::vector<hcomm_step_t>*>(b->ctx)->push_back(*s);
              return int32_t{0};
            },
        .need_scratch = [](hcomm_schedule_builder_t*, uint64_t) {},
        .chunks_for = [](hcomm_schedule_builder_t*, uint64_t, size_t) { return 1u; },
    };
    const hcomm_comm_view_t view = comm_view(3, 1);
    EXPECT_EQ(algo->build(&bad.args, &view, &builder), HCOMM_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(last_error()).find(bad.named), std::string::npos) << last_error();
    EXPECT_TRUE(steps.empty());
  }
}

// ---------------------------------------------------------------------------
// Running: each rank's schedule on the core's executor. Messages are read
// from the sender's memory only when the receiver takes them (as a
// zero-copy transport does), and every post and delivery may be put off, so
// a schedule that forwards data before it arrived, or overwrites data that
// a send still reads, gets wrong bytes.

class Network {
 public:
  struct Request {
    bool send;
    void* buf;
    size_t len;
    uint64_t tag;
    bool delivered = false;
  };

  explicit Network(uint32_t seed) : rng_(seed) {}

  bool put_off() { return std::uniform_int_distribution<int>(0, 3)(rng_) == 0; }
  Request* post(Request r) {
    requests_.push_back(std::make_unique<Request>(r));
    return requests_.back().get();
  }
  void queue(int from, int to, Request* send) { queues_[{from, to, send->tag}].push_back(send); }
  Request* take(int from, int to, uint64_t tag) {
    auto it = queues_.find({from, to, tag});
    if (it == queues_.end() || it->second.empty()) return nullptr;
    Request* send = it->second.front();
    it->second.erase(it->second.begin());
    return send;
  }
  std::mt19937& rng() { return rng_; }

 private:
  std::mt19937 rng_;
  std::vector<std::unique_ptr<Request>> requests_;
  std::map<std::tuple<int, int, uint64_t>, std::vector<Request*>> queues_;
};

class RankIO final : public exec::PeerIO {
 public:
  RankIO(Network& net, int rank) : net_(net), rank_(rank) {}

  void* isend(int peer, const void* buf, size_t len, uint64_t tag) override {
    if (net_.put_off()) return nullptr;
    Network::Request* r = net_.post({.send = true, .buf = const_cast<void*>(buf), .len = len, .tag = tag});
    net_.queue(rank_, peer, r);
    return r;
  }
  void* irecv(int, void* buf, size_t len, uint64_t tag) override {
    if (net_.put_off()) return nullptr;
    return net_.post({.send = false, .buf = buf, .len = len, .tag = tag});
  }
  bool test(int peer, void* request, size_t* bytes) override {
    auto* r = static_cast<Network::Request*>(request);
    *bytes = r->len;
    if (r->send) return r->delivered;
    if (net_.put_off()) return false;
    Network::Request* send = net_.take(peer, rank_, r->tag);
    if (!send) return false;
    if (send->len != r->len)
      HCOMM_THROW(HCOMM_ERR_INTERNAL, "a message of %zu bytes for a receive of %zu", send->len, r->len);
    if (r->len) std::memcpy(r->buf, send->buf, r->len);
    send->delivered = true;
    return true;
  }
  void progress() override {}
  void wait(int64_t) override {}
  void check_peers() override {}

 private:
  Network& net_;
  int rank_;
};

// Advances every rank's operation, in a random order each round, until all
// are done; false when no chunk completed for many rounds (a deadlock).
bool run_to_completion(const Schedules& ranks, const std::vector<exec::Buffers>& buffers, uint32_t seed) {
  Network net(seed);
  std::vector<std::unique_ptr<exec::Operation>> ops;
  std::vector<RankIO> ios;
  const int n = static_cast<int>(ranks.size());
  ios.reserve(n);
  for (int r = 0; r < n; ++r) {
    ops.push_back(std::make_unique<exec::Operation>(ranks[r], buffers[r], 3, exec::collective_tag_base(3), n));
    ios.emplace_back(net, r);
  }
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  uint64_t events = 0;
  for (int idle = 0; idle < 2000;) {
    std::shuffle(order.begin(), order.end(), net.rng());
    bool all_done = true;
    uint64_t now = 0;
    for (int r : order) {
      if (!ops[r]->done()) ops[r]->advance(ios[r]);
      all_done = all_done && ops[r]->done();
      now += ops[r]->events();
    }
    if (all_done) return true;
    idle = now == events ? idle + 1 : 0;
    events = now;
  }
  for (int r = 0; r < n; ++r)
    if (!ops[r]->done()) ADD_FAILURE() << "rank " << r << " still waits for " << ops[r]->pending_peers();
  return false;
}

// One call on every rank: the collective, its sizes and the data.
struct Case {
  hcomm_coll_t coll;
  int nranks;
  uint64_t count;              // fixed-size collectives
  std::vector<size_t> counts;  // variable-size collectives
  std::vector<size_t> displs;  // allgatherv
  hcomm_dtype_t dtype;
  hcomm_op_t op;
  int root;
  bool in_place;
  ChunkRule chunks;
  uint32_t seed;
};

// Signed values of both signs, distinct per rank; small integers for float
// so that sums are exact in any order.
template <class T>
T input(int rank, uint64_t i) {
  if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(static_cast<int>((i * 31 + static_cast<uint64_t>(rank) * 17) % 101) - 50);
  else
    return static_cast<T>((i * 7919 + static_cast<uint64_t>(rank) * 104729) % 20011) - 10005;
}

template <class T>
T sentinel() {
  return static_cast<T>(std::is_floating_point_v<T> ? 1e9 : 987654321);
}

// The reduction over ranks 0..n-1 in rank order, AVG dividing the sum.
template <class T>
T reduced(hcomm_op_t op, int nranks, uint64_t i) {
  T v = input<T>(0, i);
  for (int r = 1; r < nranks; ++r) {
    const T x = input<T>(r, i);
    v = op == HCOMM_MIN ? std::min(v, x) : op == HCOMM_MAX ? std::max(v, x) : v + x;
  }
  return op == HCOMM_AVG ? v / static_cast<T>(nranks) : v;
}

// Where a rank's buffers lie in one piece of memory, by the pointer
// relations of hcomm.h, and what that memory must hold afterwards. Elements.
template <class T>
struct RankMemory {
  std::vector<T> memory;
  size_t send_at = 0, send_elems = 0, recv_at = 0, recv_elems = 0;
  bool has_recv = true;
  std::vector<T> want;

  // Names memory element i by the buffers it lies in.
  std::string where(size_t i) const {
    std::string out;
    auto in = [&](const char* name, size_t at, size_t elems) {
      if (i < at || i >= at + elems) return;
      out += std::string(out.empty() ? "" : ", ") + name + "+" + std::to_string(i - at);
    };
    in("SEND", send_at, send_elems);
    if (has_recv) in("RECV", recv_at, recv_elems);
    return out.empty() ? "outside SEND and RECV" : out;
  }
};

template <class T>
RankMemory<T> lay_out(const Case& c, int rank) {
  const int n = c.nranks;
  const bool root = rank == c.root;
  std::vector<size_t> counts = c.counts;  // every rank's block
  if (!variable(c.coll)) counts.assign(n, c.count);
  std::vector<size_t> packed(n + 1, 0);  // block r of a packed layout at packed[r]
  for (int r = 0; r < n; ++r) packed[r + 1] = packed[r] + counts[r];
  const std::vector<size_t>& displs = c.coll == HCOMM_COLL_ALLGATHERV ? c.displs : packed;

  RankMemory<T> m;
  size_t send_elems = c.count, recv_elems = c.count;
  std::vector<std::pair<size_t, T>> outputs;  // RECV element -> value
  switch (c.coll) {
    case HCOMM_COLL_ALLREDUCE:
      for (uint64_t i = 0; i < c.count; ++i) outputs.push_back({i, reduced<T>(c.op, n, i)});
      break;
    case HCOMM_COLL_BROADCAST:
      if (!root) send_elems = 0;
      for (uint64_t i = 0; i < c.count; ++i) outputs.push_back({i, input<T>(c.root, i)});
      break;
    case HCOMM_COLL_REDUCE:
      m.has_recv = root;
      if (!root) recv_elems = 0;
      for (uint64_t i = 0; i < recv_elems; ++i) outputs.push_back({i, reduced<T>(c.op, n, i)});
      break;
    case HCOMM_COLL_ALLGATHER:
    case HCOMM_COLL_ALLGATHERV:
      send_elems = counts[rank];
      recv_elems = 0;
      for (int q = 0; q < n; ++q) {
        if (counts[q]) recv_elems = std::max(recv_elems, displs[q] + counts[q]);
        for (size_t j = 0; j < counts[q]; ++j) outputs.push_back({displs[q] + j, input<T>(q, j)});
      }
      break;
    default:  // reduce_scatter(_v)
      send_elems = packed[n];
      recv_elems = counts[rank];
      for (size_t j = 0; j < counts[rank]; ++j) outputs.push_back({j, reduced<T>(c.op, n, packed[rank] + j)});
  }
  const bool in_place = c.in_place && (c.coll != HCOMM_COLL_REDUCE || root);
  if (c.coll == HCOMM_COLL_BROADCAST && !root) {
    // The core resolves SEND to RECV where a rank reads no input.
  } else if (!in_place) {
    m.recv_at = send_elems;
  } else if (c.coll == HCOMM_COLL_ALLGATHER || c.coll == HCOMM_COLL_ALLGATHERV) {
    m.send_at = displs[rank];
  } else if (c.coll == HCOMM_COLL_REDUCE_SCATTER || c.coll == HCOMM_COLL_REDUCE_SCATTER_V) {
    m.recv_at = packed[rank];
  }
  m.send_elems = send_elems;
  m.recv_elems = recv_elems;
  m.memory.assign(std::max(m.send_at + send_elems, m.recv_at + recv_elems), sentinel<T>());
  for (size_t i = 0; i < send_elems; ++i) m.memory[m.send_at + i] = input<T>(rank, i);
  m.want = m.memory;
  for (const auto& [i, v] : outputs) m.want[m.recv_at + i] = v;
  return m;
}

hcomm_coll_args_t args_of(const Case& c, int rank) {
  const bool in_place = c.coll == HCOMM_COLL_BROADCAST ? c.in_place || rank != c.root
                        : c.coll == HCOMM_COLL_REDUCE  ? c.in_place && rank == c.root
                                                       : c.in_place;
  return coll_args(c.coll, variable(c.coll) ? 0 : c.count, c.dtype, c.op, c.root, in_place, &c.counts, &c.displs);
}

template <class T>
void run_case(const Case& c) {
  const hcomm_algorithm_desc_t* algo = ring(c.coll);
  ASSERT_NE(algo, nullptr);
  const Schedules ranks = build_all(*algo, c.nranks, c.chunks, [&](int rank) { return args_of(c, rank); });
  ASSERT_EQ(ranks.size(), static_cast<size_t>(c.nranks));
  const std::vector<std::string> problems = cross_rank_problems(ranks);
  ASSERT_TRUE(problems.empty()) << joined(problems);

  std::vector<RankMemory<T>> memory;
  std::vector<std::vector<uint8_t>> scratch;
  std::vector<exec::Buffers> buffers;
  for (int r = 0; r < c.nranks; ++r) memory.push_back(lay_out<T>(c, r));
  for (int r = 0; r < c.nranks; ++r) {
    RankMemory<T>& m = memory[r];
    scratch.emplace_back(ranks[r]->scratch_bytes, 0xA5);
    buffers.push_back({.send = m.memory.data() + m.send_at,
                       .recv = m.has_recv ? m.memory.data() + m.recv_at : nullptr,
                       .scratch = scratch.back().data()});
  }
  try {
    ASSERT_TRUE(run_to_completion(ranks, buffers, c.seed)) << "deadlock";
  } catch (const Error& e) {
    FAIL() << e.what();
  }
  for (int r = 0; r < c.nranks; ++r) {
    const RankMemory<T>& m = memory[r];
    int wrong = 0;
    for (size_t i = 0; i < m.want.size(); ++i)
      if (m.memory[i] != m.want[i] && wrong++ < 3)
        ADD_FAILURE() << "rank " << r << " element " << i << " (" << m.where(i) << "): expected " << m.want[i]
                      << ", got " << m.memory[i];
    EXPECT_EQ(wrong, 0) << "rank " << r << " of " << c.nranks;
  }
}

struct Workload {
  hcomm_dtype_t dtype;
  hcomm_op_t op;
};

bool reduces(hcomm_coll_t coll) {
  return coll == HCOMM_COLL_ALLREDUCE || coll == HCOMM_COLL_REDUCE || coll == HCOMM_COLL_REDUCE_SCATTER ||
         coll == HCOMM_COLL_REDUCE_SCATTER_V;
}

std::vector<Workload> workloads(hcomm_coll_t coll) {
  if (!reduces(coll)) return {{HCOMM_INT64, HCOMM_SUM}, {HCOMM_FLOAT32, HCOMM_SUM}};
  return {{HCOMM_INT64, HCOMM_SUM},
          {HCOMM_INT64, HCOMM_MIN},
          {HCOMM_INT64, HCOMM_MAX},
          {HCOMM_INT64, HCOMM_AVG},
          {HCOMM_FLOAT32, HCOMM_SUM}};
}

// Per-rank counts for the variable-size collectives, empty blocks among them.
std::vector<std::vector<size_t>> count_patterns(int n) {
  std::vector<std::vector<size_t>> out;
  for (size_t scale : {1, 9}) {
    std::vector<size_t> uneven(n), first_empty(n);
    for (int r = 0; r < n; ++r) {
      uneven[r] = (static_cast<size_t>(r) * 5 + 3) % 7 * scale;
      first_empty[r] = r == 0 ? 0 : (static_cast<size_t>(r) + 1) * scale;
    }
    out.push_back(uneven);
    out.push_back(first_empty);
  }
  out.push_back(std::vector<size_t>(n, 0));
  return out;
}

// Blocks in reverse rank order with a one-element gap after each.
std::vector<size_t> reversed_displs(const std::vector<size_t>& counts) {
  std::vector<size_t> displs(counts.size());
  size_t at = 0;
  for (size_t r = counts.size(); r-- > 0;) {
    displs[r] = at;
    at += counts[r] + 1;
  }
  return displs;
}

struct Params {
  hcomm_coll_t coll;
  int nranks;
};

void PrintTo(const Params& p, std::ostream* os) { *os << "collective " << p.coll << " on " << p.nranks << " ranks"; }

class RingCollective : public ::testing::TestWithParam<Params> {};

TEST_P(RingCollective, MatchesTheSerialReference) {
  const auto [coll, n] = GetParam();
  std::vector<int> roots = {0};
  if (coll == HCOMM_COLL_BROADCAST || coll == HCOMM_COLL_REDUCE) roots = {0, n / 2, n - 1};
  roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
  std::vector<std::pair<uint64_t, std::vector<size_t>>> sizes;  // count, or per-rank counts
  if (variable(coll)) {
    for (const auto& counts : count_patterns(n)) sizes.push_back({0, counts});
  } else {
    for (uint64_t count : {0, 1, 2, 7, 61}) sizes.push_back({count, {}});
    if (n > 2) sizes.push_back({static_cast<uint64_t>(n - 1), {}});
  }
  uint32_t seed = 1;
  for (const auto& [count, counts] : sizes)
    for (const Chunking& chunking : kChunkings)
      for (bool in_place : {false, true})
        for (int root : roots)
          for (const Workload& w : workloads(coll)) {
            Case c = {.coll = coll,
                      .nranks = n,
                      .count = count,
                      .counts = counts,
                      .displs = coll == HCOMM_COLL_ALLGATHERV ? reversed_displs(counts) : std::vector<size_t>{},
                      .dtype = w.dtype,
                      .op = w.op,
                      .root = root,
                      .in_place = in_place,
                      .chunks = chunking.rule,
                      .seed = seed++};
            SCOPED_TRACE(::testing::Message() << "count " << count << " blocks " << ::testing::PrintToString(counts)
                                              << " chunks " << chunking.name << (in_place ? " in place" : "")
                                              << " root " << root << " dtype " << w.dtype << " op " << w.op);
            if (w.dtype == HCOMM_FLOAT32)
              run_case<float>(c);
            else
              run_case<int64_t>(c);
            if (HasFailure()) return;  // the first failing case says enough
          }
}

std::vector<Params> params() {
  std::vector<Params> out;
  for (hcomm_coll_t coll :
       {HCOMM_COLL_ALLREDUCE, HCOMM_COLL_ALLGATHER, HCOMM_COLL_ALLGATHERV, HCOMM_COLL_REDUCE_SCATTER,
        HCOMM_COLL_REDUCE_SCATTER_V, HCOMM_COLL_BROADCAST, HCOMM_COLL_REDUCE})
    for (int n : {1, 2, 3, 4, 5, 7, 8}) out.push_back({coll, n});
  return out;
}

std::string params_name(const ::testing::TestParamInfo<Params>& info) {
  const char* names[HCOMM_NUM_COLLS] = {"allreduce", "broadcast", "reduce", "allgather",  "reduce_scatter",   "", "",
                                        "",          "",          "",       "allgatherv", "reduce_scatter_v", ""};
  return std::string(names[info.param.coll]) + "_n" + std::to_string(info.param.nranks);
}

INSTANTIATE_TEST_SUITE_P(Collectives, RingCollective, ::testing::ValuesIn(params()), params_name);

}  // namespace
}  // namespace hcomm
