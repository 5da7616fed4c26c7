// The selector over fake algorithms whose costs are simple lines in the
// message size: the order by cost, the score map's ranges and its text, size,
// rank and memory-kind limits, HCOMM_TUNE rules and profiles, forcing, and the
// fallbacks when a choice does not serve a call or its build declines.
#include "core/algorithm/selector.hpp"

#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <string>
#include <vector>

#include "core/algorithm/layout.hpp"
#include "core/common/error.hpp"

namespace hcomm {
namespace {

using algorithm::message_bytes;
using algorithm::parse_tune;
using algorithm::Selector;
using algorithm::TuneRule;
using Desc = hcomm_algorithm_desc_t;
using Cost = double (*)(const hcomm_coll_args_t*, const hcomm_comm_view_t*);

constexpr int kRanks = 4;

double bytes_of(const hcomm_coll_args_t* a, const hcomm_comm_view_t* c) {
  return static_cast<double>(message_bytes(*a, c->nranks));
}
// Latency-bound and bandwidth-bound lines: 10 + b against 1000 + b/100, which
// cross at 1000 bytes, so the power of two 1K is the first size "large" wins.
double small_cost(const hcomm_coll_args_t* a, const hcomm_comm_view_t* c) { return 10 + bytes_of(a, c); }
double large_cost(const hcomm_coll_args_t* a, const hcomm_comm_view_t* c) { return 1000 + bytes_of(a, c) / 100; }
double free_cost(const hcomm_coll_args_t*, const hcomm_comm_view_t*) { return 0; }
double nan_cost(const hcomm_coll_args_t*, const hcomm_comm_view_t*) { return NAN; }
double flat_100(const hcomm_coll_args_t*, const hcomm_comm_view_t*) { return 100; }
// The v-collectives' samples carry count 0 and nranks counts (NaN, ranked
// last, where they do not).
double counts_cost(const hcomm_coll_args_t* a, const hcomm_comm_view_t* c) {
  if (a->count != 0 || !a->recv_counts || !a->recv_displs) return NAN;
  double sum = 0;
  for (int r = 0; r < c->nranks; ++r) {
    if (a->recv_displs[r] != static_cast<size_t>(r) * a->recv_counts[0]) return NAN;
    sum += static_cast<double>(a->recv_counts[r]);
  }
  return sum;
}

hcomm_result_t builds_nothing(const hcomm_coll_args_t*, const hcomm_comm_view_t*, hcomm_schedule_builder_t*) {
  return HCOMM_SUCCESS;
}
hcomm_result_t declines(const hcomm_coll_args_t*, const hcomm_comm_view_t*, hcomm_schedule_builder_t*) {
  return HCOMM_ERR_UNSUPPORTED;
}

Desc fake(const char* name, Cost cost, uint32_t colls = 1u << HCOMM_COLL_ALLREDUCE) {
  return Desc{.size = sizeof(Desc),
              .name = name,
              .colls = colls,
              .mem_kinds = HCOMM_MEM_HOST | HCOMM_MEM_CUDA,
              .min_bytes = 0,
              .max_bytes = UINT64_MAX,
              .min_ranks = 1,
              .max_ranks = INT_MAX,
              .cost = cost,
              .build = builds_nothing};
}

const Desc kSmall = fake("small", small_cost);
const Desc kLarge = fake("large", large_cost);

hcomm_comm_view_t view(int nranks = kRanks) {
  return hcomm_comm_view_t{.size = sizeof(hcomm_comm_view_t),
                           .rank = 0,
                           .nranks = nranks,
                           .link = {1, 1e-4, 1e-5},
                           .chunk_bytes = 512 << 10};
}

hcomm_coll_args_t call(uint64_t bytes, hcomm_coll_t coll = HCOMM_COLL_ALLREDUCE, uint32_t mem = HCOMM_MEM_HOST) {
  return hcomm_coll_args_t{.size = sizeof(hcomm_coll_args_t),
                           .coll = coll,
                           .count = bytes,
                           .dtype = HCOMM_UINT8,
                           .dtype_size = 1,
                           .op = HCOMM_SUM,
                           .mem_kind = mem};
}

Selector selector(std::vector<const Desc*> algorithms, const std::string& tune = "") {
  return Selector(view(), parse_tune(tune), std::move(algorithms));
}

// The names of the candidates, best first.
std::string order(const Selector& s, uint64_t bytes, uint32_t mem = HCOMM_MEM_HOST) {
  std::string out;
  for (const Desc* d : s.candidates(call(bytes, HCOMM_COLL_ALLREDUCE, mem)))
    out += (out.empty() ? "" : ",") + std::string(d->name);
  return out;
}

std::vector<std::string> lines(const Selector& s) { return s.score_map().lines(); }

TEST(Selector, OrdersByCostAtTheRangesSmallestSize) {
  const Selector s = selector({&kSmall, &kLarge});
  EXPECT_EQ(order(s, 0), "small,large");
  EXPECT_EQ(order(s, 8), "small,large");
  EXPECT_EQ(order(s, 1000), "small,large");  // sampled at 512
  EXPECT_EQ(order(s, 1023), "small,large");
  EXPECT_EQ(order(s, 1024), "large,small");
  EXPECT_EQ(order(s, uint64_t{5} << 30), "large,small");  // beyond 1 GiB: the last range
  EXPECT_EQ(s.pick(call(7))->name, std::string("small"));
  EXPECT_EQ(s.pick(call(1 << 20))->name, std::string("large"));
  EXPECT_EQ(lines(s), std::vector<std::string>{"allreduce host: 0-1K small, 1K-inf large"});
}

// An infinite or NaN cost means "does not serve": never chosen, never forced.
TEST(Selector, RegistryOrderBreaksTiesAndNanOrInfiniteCostsDoNotServe) {
  const Desc a = fake("a", flat_100), b = fake("b", flat_100), broken = fake("broken", nan_cost);
  Selector s = selector({&broken, &b, &a});
  EXPECT_EQ(order(s, 64), "b,a");
  EXPECT_THROW(s.force(HCOMM_COLL_ALLREDUCE, "broken"), hcomm::Error);
}

TEST(Selector, SizeLimitsStartRanges) {
  Desc limited = fake("limited", free_cost);
  limited.min_bytes = 100;
  limited.max_bytes = 5000;
  const Selector s = selector({&kSmall, &kLarge, &limited});
  EXPECT_EQ(order(s, 99), "small,large");
  EXPECT_EQ(order(s, 100), "limited,small,large");
  EXPECT_EQ(order(s, 5000), "limited,large,small");
  EXPECT_EQ(order(s, 5001), "large,small");
  EXPECT_EQ(lines(s), std::vector<std::string>{"allreduce host: 0-100 small, 100-5001 limited, 5001-inf large"});
}

TEST(Selector, RankLimitsAndMemoryKinds) {
  Desc host_only = fake("host_only", free_cost), big_comms = fake("big_comms", free_cost);
  host_only.mem_kinds = HCOMM_MEM_HOST;
  big_comms.min_ranks = kRanks + 1;
  const Selector s = selector({&kSmall, &kLarge, &host_only, &big_comms});
  EXPECT_EQ(order(s, 8), "host_only,small,large");
  EXPECT_EQ(order(s, 8, HCOMM_MEM_CUDA), "small,large");
  EXPECT_EQ(order(s, 4096, HCOMM_MEM_CUDA), "large,small");
  EXPECT_EQ(lines(s),
            (std::vector<std::string>{"allreduce host: 0-inf host_only", "allreduce cuda: 0-1K small, 1K-inf large"}));
  const Selector big(view(kRanks + 1), {}, {&kSmall, &big_comms});
  EXPECT_EQ(big.pick(call(8))->name, std::string("big_comms"));
}

TEST(Selector, EveryCollectiveHasItsOwnLine) {
  const Desc bcast = fake("tree", flat_100, 1u << HCOMM_COLL_BROADCAST);
  const Desc barrier = fake("dissemination", flat_100, 1u << HCOMM_COLL_BARRIER);
  const Selector s = selector({&barrier, &kSmall, &bcast});
  EXPECT_EQ(lines(s), (std::vector<std::string>{"allreduce host: 0-inf small", "broadcast host: 0-inf tree",
                                                "barrier host: 0-inf dissemination"}));
  EXPECT_EQ(s.pick(call(0, HCOMM_COLL_BARRIER))->name, std::string("dissemination"));
  EXPECT_EQ(s.pick(call(8, HCOMM_COLL_ALLGATHER)), nullptr);
}

TEST(Selector, SizesWithoutAnAlgorithmShowNone) {
  Desc from_1k = fake("from_1k", flat_100);
  from_1k.min_bytes = 1024;
  const Selector s = selector({&from_1k});
  EXPECT_EQ(lines(s), std::vector<std::string>{"allreduce host: 0-1K none, 1K-inf from_1k"});
  EXPECT_EQ(s.pick(call(1023)), nullptr);
  try {
    s.build(call(1023));
    ADD_FAILURE() << "built a call no algorithm serves";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), HCOMM_ERR_UNSUPPORTED);
    EXPECT_NE(std::string(e.what()).find("allreduce of 1023 elements on 4 ranks"), std::string::npos) << e.what();
  }
}

// The samples give message_bytes() the size of the range: per-rank blocks of
// size/n, and the v-collectives' counts with count 0.
TEST(Selector, SamplesLayTheBlocksOutAsTheCollectiveDoes) {
  const Desc v_sum = fake("counts", counts_cost, 1u << HCOMM_COLL_ALLGATHERV);
  const Desc v_flat = fake("flat", flat_100, 1u << HCOMM_COLL_ALLGATHERV);
  const Desc g_sum = fake("blocks", bytes_of, 1u << HCOMM_COLL_ALLGATHER);
  const Desc g_flat = fake("flat", flat_100, 1u << HCOMM_COLL_ALLGATHER);
  const Selector s = selector({&v_flat, &v_sum, &g_flat, &g_sum});
  EXPECT_EQ(lines(s), (std::vector<std::string>{"allgather host: 0-128 blocks, 128-inf flat",
                                                "allgatherv host: 0-128 counts, 128-inf flat"}));
}

TEST(Selector, TuneRulesLeadWhereTheyCover) {
  const Selector s = selector({&kSmall, &kLarge}, "allreduce:0-64:@large#allreduce:1M-inf:@small#allreduce:@large");
  EXPECT_EQ(order(s, 8), "large,small");
  EXPECT_EQ(order(s, 64), "large,small");  // the third rule
  EXPECT_EQ(order(s, 1 << 20), "small,large");
  EXPECT_EQ(lines(s), std::vector<std::string>{"allreduce host: 0-1M large, 1M-inf small"});
  const Selector first = selector({&kSmall, &kLarge}, "allreduce:0-64:@large#allreduce:0-1K:@small");
  EXPECT_EQ(order(first, 63), "large,small");
  EXPECT_EQ(order(first, 64), "small,large");
  EXPECT_EQ(lines(first), std::vector<std::string>{"allreduce host: 0-64 large, 64-1K small, 1K-inf large"});
}

TEST(Selector, RuleForAnAlgorithmNotLoadedIsAnError) {
  try {
    selector({&kSmall, &kLarge}, "allreduce:0-64:@nosuch");
    ADD_FAILURE() << "accepted a rule for an algorithm not loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), HCOMM_ERR_CONFIG);
    EXPECT_NE(std::string(e.what()).find("'nosuch' for allreduce"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("allreduce: small, large"), std::string::npos) << e.what();
  }
  // An algorithm of another collective is not one for allreduce either.
  const Desc tree = fake("tree", flat_100, 1u << HCOMM_COLL_BROADCAST);
  EXPECT_THROW(selector({&kSmall, &tree}, "allreduce:@tree"), Error);
}

TEST(Selector, RuleThatDoesNotServeACallLeavesItToTheCostModel) {
  Desc limited = fake("limited", large_cost);
  limited.min_bytes = 100;
  limited.max_bytes = 5000;
  const Selector s = selector({&kSmall, &limited}, "allreduce:@limited");
  EXPECT_EQ(order(s, 99), "small");
  EXPECT_EQ(order(s, 100), "limited,small");
  EXPECT_EQ(order(s, 5001), "small");
  const auto& before = s.score_map().find(HCOMM_COLL_ALLREDUCE, HCOMM_MEM_HOST, 99);
  EXPECT_EQ(before.passed_rule, 0);
  EXPECT_EQ(s.score_map().find(HCOMM_COLL_ALLREDUCE, HCOMM_MEM_HOST, 100).passed_rule, -1);
}

size_t occurrences(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

TEST(Selector, WarnsOnceWhenACallIsBuiltAgainstAChoice) {
  Desc limited = fake("limited", large_cost);
  limited.min_bytes = 100;
  limited.max_bytes = 5000;
  Selector s = selector({&kSmall, &limited}, "allreduce:@limited");
  testing::internal::CaptureStderr();
  s.pick(call(7));  // a query does not warn
  s.build(call(99));
  s.build(call(50));
  s.build(call(200));
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(occurrences(err, "is not followed"), 1u) << err;
  EXPECT_EQ(occurrences(err,
                        "HCOMM_TUNE rule 'allreduce:@limited' is not followed for allreduce of 99 bytes on 4 "
                        "ranks (host memory): limited does not serve it; the cost model chooses small"),
            1u)
      << err;
  s.force(HCOMM_COLL_ALLREDUCE, "limited");
  testing::internal::CaptureStderr();
  s.build(call(10));
  s.build(call(20));
  s.build(call(300));
  err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(occurrences(err, "WARN"), 1u) << err;
  EXPECT_EQ(occurrences(err,
                        "algorithm limited, forced for allreduce, does not serve allreduce of 10 bytes on 4 "
                        "ranks (host memory); such calls use the selector's choice (small here)"),
            1u)
      << err;
}

const Desc kRing = fake("ring", large_cost);
const Desc kTree = fake("double_binary_tree", small_cost);
const Desc kHalving = fake("halving_doubling", small_cost);

TEST(Selector, ThresholdsProfile) {
  const Selector s = selector({&kRing, &kTree, &kHalving}, "profile:thresholds");
  EXPECT_EQ(s.pick(call(0))->name, std::string("ring"));
  EXPECT_EQ(s.pick(call((128 << 10) - 1))->name, std::string("ring"));
  EXPECT_EQ(s.pick(call(128 << 10))->name, std::string("double_binary_tree"));
  EXPECT_EQ(s.pick(call((8 << 20) - 1))->name, std::string("double_binary_tree"));
  EXPECT_EQ(s.pick(call(8 << 20))->name, std::string("halving_doubling"));
  EXPECT_EQ(lines(s), std::vector<std::string>{
                          "allreduce host: 0-128K ring, 128K-8M double_binary_tree, 8M-inf halving_doubling"});
}

TEST(Selector, ProfileAlgorithmNotLoadedFallsBackToTheCostModel) {
  const Selector s = selector({&kSmall, &kRing, &kHalving}, "profile:thresholds");
  EXPECT_EQ(order(s, 64), "ring,small,halving_doubling");
  EXPECT_EQ(order(s, 200 << 10), "ring,small,halving_doubling");  // the cost model's order
  EXPECT_EQ(s.score_map().find(HCOMM_COLL_ALLREDUCE, HCOMM_MEM_HOST, 200 << 10).passed_rule, 1);
  EXPECT_EQ(order(s, 8 << 20), "halving_doubling,ring,small");
  // Rules before the profile take precedence.
  const Selector mixed = selector({&kSmall, &kRing, &kTree, &kHalving}, "allreduce:0-4K:@small#profile:thresholds");
  EXPECT_EQ(lines(mixed), std::vector<std::string>{"allreduce host: 0-4K small, 4K-128K ring, 128K-8M "
                                                   "double_binary_tree, 8M-inf halving_doubling"});
}

// A tune file's measured choices: host memory only; one naming an algorithm
// not loaded here leaves its sizes to the cost model, with a warning that
// names the file.
TEST(Selector, TuneFileRulesCoverHostMemoryOnly) {
  std::vector<TuneRule> rules = parse_tune("allreduce:0-4K:@large#allreduce:4K-inf:@missing");
  for (TuneRule& r : rules) r.file = "/tmp/x.tune", r.mem_kinds = HCOMM_MEM_HOST;
  const Selector s(view(), rules, {&kSmall, &kLarge});
  EXPECT_EQ(order(s, 8), "large,small");
  EXPECT_EQ(order(s, 8, HCOMM_MEM_CUDA), "small,large");
  EXPECT_EQ(order(s, 4096), "large,small");  // the cost model's order: missing is not loaded
  EXPECT_EQ(lines(s),
            (std::vector<std::string>{"allreduce host: 0-inf large", "allreduce cuda: 0-1K small, 1K-inf large"}));
  testing::internal::CaptureStderr();
  s.build(call(5000));
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("rule 'allreduce:4K-inf:@missing' of HCOMM_TUNE_FILE /tmp/x.tune is not followed for allreduce "
                     "of 5000 bytes on 4 ranks (host memory): missing is not loaded; the cost model chooses large"),
            std::string::npos)
      << err;
}

TEST(Selector, ForcedAlgorithmLeadsWhereItServes) {
  Desc limited = fake("limited", large_cost);
  limited.min_bytes = 100;
  Selector s = selector({&kSmall, &kLarge, &limited}, "allreduce:@small");
  EXPECT_EQ(order(s, 1 << 20), "small,large,limited");
  s.force(HCOMM_COLL_ALLREDUCE, "large");
  EXPECT_EQ(order(s, 8), "large,small");
  EXPECT_EQ(order(s, 1 << 20), "large,small,limited");
  EXPECT_EQ(s.build(call(1 << 20))->algorithm, "large");
  s.force(HCOMM_COLL_ALLREDUCE, "limited");
  EXPECT_EQ(order(s, 99), "small,large");  // does not serve: the usual order
  EXPECT_EQ(order(s, 100), "limited,small,large");
  s.force(HCOMM_COLL_ALLREDUCE, "");
  EXPECT_EQ(order(s, 1 << 20), "small,large,limited");
  // Forcing one collective leaves the others alone.
  const Desc tree = fake("tree", flat_100, 1u << HCOMM_COLL_BROADCAST);
  Selector two = selector({&kSmall, &kLarge, &tree});
  two.force(HCOMM_COLL_BROADCAST, "tree");
  EXPECT_EQ(order(two, 8), "small,large");
}

TEST(Selector, ForcingWhatDoesNotServeTheCollectiveIsAnError) {
  const Desc tree = fake("tree", flat_100, 1u << HCOMM_COLL_BROADCAST);
  Desc big_comms = fake("big_comms", free_cost);
  big_comms.min_ranks = kRanks + 1;
  Selector s = selector({&kSmall, &kLarge, &tree, &big_comms});
  for (const char* name : {"tree", "nosuch", "big_comms"}) {
    try {
      s.force(HCOMM_COLL_ALLREDUCE, name);
      ADD_FAILURE() << "forced " << name;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), HCOMM_ERR_INVALID_ARGUMENT);
      EXPECT_NE(std::string(e.what()).find(std::string("'") + name + "' does not serve allreduce"), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("that do: small, large"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(order(s, 8), "small,large");
  EXPECT_THROW(s.force(static_cast<hcomm_coll_t>(HCOMM_NUM_COLLS), "small"), Error);
}

TEST(Selector, DecliningBuildGivesTheNextCandidate) {
  Desc shy = fake("shy", free_cost);
  shy.build = declines;
  const Selector s = selector({&kSmall, &shy});
  EXPECT_EQ(s.pick(call(8))->name, std::string("shy"));  // pick names the first candidate
  EXPECT_EQ(s.build(call(8))->algorithm, "small");
  const Selector alone = selector({&shy});
  EXPECT_THROW(alone.build(call(8)), Error);
}

}  // namespace
}  // namespace hcomm
