// The hierarchical plugin's algorithms on communicators that span several
// hosts: every collective through the simulated fabric against the serial
// reference, for even, uneven, one-rank and interleaved hosts; where their
// transfers cross hosts and how many bytes do; and that they decline on one
// host (infinite cost, HCOMM_ERR_UNSUPPORTED), leaving it to the flat ones.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <set>

#include "algorithm_plugins.hpp"
#include "algorithm_run.hpp"
#include "core/algorithm/score_map.hpp"

namespace hcomm::algotest {
namespace {

// A host layout: node_of of each rank.
struct Layout {
  const char* name;
  std::vector<int> node_of;
};

std::vector<int> hosts_of_sizes(std::initializer_list<int> sizes) {
  std::vector<int> out;
  int host = 0;
  for (int size : sizes) {
    out.insert(out.end(), static_cast<size_t>(size), host);
    ++host;
  }
  return out;
}

const std::vector<Layout>& layouts() {
  static const std::vector<Layout> all = {
      {"2x2", hosts_of_sizes({2, 2})},        {"3_2", hosts_of_sizes({3, 2})},
      {"1x4", hosts_of_sizes({1, 1, 1, 1})},  {"2_3_1", hosts_of_sizes({2, 3, 1})},
      {"one_host_of_4", hosts_of_sizes({4})}, {"one_rank", hosts_of_sizes({1})},
      {"interleaved_0101", {0, 1, 0, 1}},     {"interleaved_3_hosts", {0, 1, 2, 0, 1, 0, 2}},
  };
  return all;
}

const uint64_t kCounts[] = {0, 1, 7, 1027};
constexpr uint64_t kLargeCount = 100003;

const Workload kReductions[] = {{HCOMM_INT64, HCOMM_SUM},  {HCOMM_INT64, HCOMM_PROD}, {HCOMM_INT64, HCOMM_MIN},
                                {HCOMM_INT64, HCOMM_MAX},  {HCOMM_INT64, HCOMM_AVG},  {HCOMM_FLOAT32, HCOMM_SUM},
                                {HCOMM_FLOAT32, HCOMM_MAX}};
const Workload kMoves[] = {{HCOMM_INT64, HCOMM_SUM}, {HCOMM_FLOAT32, HCOMM_SUM}};

std::vector<AlgorithmEntry> hierarchical_entries() {
  std::vector<AlgorithmEntry> out;
  for (const AlgorithmEntry& e : algorithm_entries())
    if (std::string(e.plugin->name) == "hierarchical") out.push_back(e);
  return out;
}

View host_view(const Layout& layout) {
  return {.name = layout.name, .flags = 0, .window_bytes = 0, .node_of = layout.node_of};
}

struct Params {
  AlgorithmEntry entry;
  Layout layout;
};

void PrintTo(const Params& p, std::ostream* os) { *os << p.entry.id << "_" << p.layout.name; }

std::vector<Params> all_params() {
  std::vector<Params> out;
  for (const AlgorithmEntry& e : hierarchical_entries())
    for (const Layout& l : layouts()) out.push_back({e, l});
  return out;
}

class HierarchicalConformance : public ::testing::TestWithParam<Params> {};

// Every count (the large one in whole and 5-chunk cuts only), root, in-place
// form and chunking, the workloads taking turns; each case's schedules are
// checked, run with random timing and compared element by element.
TEST_P(HierarchicalConformance, MatchesTheSerialReference) {
  const Params& p = GetParam();
  const CollTraits& t = *coll_traits(p.entry.coll);
  const View view = host_view(p.layout);
  const int n = static_cast<int>(p.layout.node_of.size());
  std::vector<uint64_t> counts(std::begin(kCounts), std::end(kCounts));
  counts.push_back(kLargeCount);
  // One host, or one rank per host: every rank declines, so the flat
  // algorithms serve the call.
  const std::set<int> hosts(p.layout.node_of.begin(), p.layout.node_of.end());
  const bool declines = hosts.size() == 1 || hosts.size() == p.layout.node_of.size();
  int passed = 0, declined = 0, failed = 0;
  uint32_t index = 0;
  for (uint64_t count : counts)
    for (int root = 0; root < (t.rooted ? n : 1); ++root)
      for (bool in_place : {false, true})
        for (const Chunking& chunking : kChunkings) {
          const bool cheap_cut = std::string(chunking.name) == "whole" || std::string(chunking.name) == "fixed5";
          if (count == kLargeCount && !cheap_cut) continue;
          ++index;
          const Workload w =
              t.reduces ? kReductions[index % std::size(kReductions)] : kMoves[index % std::size(kMoves)];
          const Case c = {.coll = p.entry.coll,
                          .nranks = n,
                          .count = count,
                          .root = root,
                          .in_place = in_place,
                          .chunking = &chunking,
                          .workload = w,
                          .view = &view,
                          .seed = index};
          SeenSchedules seen;
          const Verdict v = run_case(*p.entry.desc, c, seen);
          EXPECT_EQ(v.kind == Verdict::kDeclined, declines) << c.describe() << " on hosts " << p.layout.name;
          passed += v.kind == Verdict::kPassed;
          declined += v.kind == Verdict::kDeclined;
          if (v.kind != Verdict::kFailed) continue;
          ADD_FAILURE() << p.entry.id << " on hosts " << p.layout.name << ": " << c.describe() << joined(v.problems);
          if (++failed == 5) GTEST_FAIL() << "stopped after 5 failing cases";
        }
  EXPECT_GT(declines ? declined : passed, 0);
}

std::string params_name(const ::testing::TestParamInfo<Params>& info) {
  return info.param.entry.id + "_" + info.param.layout.name;
}

INSTANTIATE_TEST_SUITE_P(Hosts, HierarchicalConformance, ::testing::ValuesIn(all_params()), params_name);

// Every rank's build of one call under `view`.
std::vector<RankSchedule> schedules(const char* name, hcomm_coll_t coll, const View& view, uint64_t count,
                                    int root = 0) {
  const hcomm_algorithm_desc_t* algo = AlgorithmPlugins::get().find(name, coll);
  EXPECT_NE(algo, nullptr) << name << ": " << AlgorithmPlugins::get().load_error();
  if (!algo) return {};
  const Case c = {.coll = coll,
                  .nranks = static_cast<int>(view.node_of.size()),
                  .count = count,
                  .root = root,
                  .in_place = false,
                  .chunking = &kChunkings[0],
                  .workload = {HCOMM_INT64, HCOMM_SUM},
                  .view = &view,
                  .seed = 1};
  const CallArgs args(c);
  const Built built = build_all(*algo, args, c);
  EXPECT_TRUE(built.all(HCOMM_SUCCESS)) << name;
  return built.ranks;
}

struct CrossHost {
  uint64_t total = 0;                      // bytes sent between hosts by all ranks
  uint64_t busiest = 0;                    // the most any one rank sends to other hosts
  std::vector<std::pair<int, int>> pairs;  // (sender, receiver) of each crossing send
};

CrossHost cross_host(const std::vector<RankSchedule>& ranks, const std::vector<int>& node_of) {
  CrossHost out;
  for (size_t r = 0; r < ranks.size(); ++r) {
    uint64_t mine = 0;
    for (const hcomm_step_t& s : ranks[r].steps)
      if (s.kind == HCOMM_STEP_SEND && node_of[static_cast<size_t>(s.peer)] != node_of[r]) {
        mine += s.bytes;
        out.pairs.emplace_back(static_cast<int>(r), s.peer);
      }
    out.total += mine;
    out.busiest = std::max(out.busiest, mine);
  }
  return out;
}

// 2 hosts x 2 ranks: a flat ring's two crossing links carry 2(n-1)/n B = 1.5B
// each; hier_ring's rails carry B/2 per rank (a reduce-scatter and an
// allgather of its B/2 slice between 2 hosts), 2B in all.
TEST(HierarchicalCrossHostBytes, HierRingHalvesTheSlowLinksLoad) {
  const Layout hosts = {"2x2", hosts_of_sizes({2, 2})};
  const View view = host_view(hosts);
  constexpr uint64_t kCount = 4096, kBytes = kCount * 8;
  const CrossHost flat = cross_host(schedules("ring", HCOMM_COLL_ALLREDUCE, view, kCount), hosts.node_of);
  const CrossHost hier = cross_host(schedules("hier_ring", HCOMM_COLL_ALLREDUCE, view, kCount), hosts.node_of);
  EXPECT_EQ(flat.total, 3 * kBytes);
  EXPECT_EQ(flat.busiest, 3 * kBytes / 2);
  EXPECT_EQ(hier.total, 2 * kBytes);
  EXPECT_EQ(hier.busiest, kBytes / 2);
  EXPECT_LE(2 * hier.busiest, flat.busiest);
  EXPECT_LE(3 * hier.total, 2 * flat.total);
}

// Interleaved hosts: the flat ring crosses hosts on every link, the
// hierarchical schedule no more than with hosts in rank order.
TEST(HierarchicalCrossHostBytes, InterleavedHostsCostTheFlatRingMost) {
  const Layout hosts = {"0101", {0, 1, 0, 1}};
  const View view = host_view(hosts);
  constexpr uint64_t kCount = 4096, kBytes = kCount * 8;
  EXPECT_EQ(cross_host(schedules("ring", HCOMM_COLL_ALLREDUCE, view, kCount), hosts.node_of).total, 6 * kBytes);
  EXPECT_EQ(cross_host(schedules("hier_ring", HCOMM_COLL_ALLREDUCE, view, kCount), hosts.node_of).total, 2 * kBytes);
}

// Counterparts only: a crossing transfer of the rail algorithms joins ranks
// of equal local rank below the smallest host's size; of the leader
// algorithms, the lowest ranks of their hosts (or the root).
TEST(HierarchicalCrossHostBytes, OnlyRailsAndLeadersCrossHosts) {
  const Layout hosts = {"2_3_1_interleaved", {0, 1, 1, 0, 1, 2}};
  const View view = host_view(hosts);
  const std::vector<int> local = {0, 0, 1, 1, 2, 0};
  for (hcomm_coll_t coll : {HCOMM_COLL_ALLREDUCE, HCOMM_COLL_ALLGATHER, HCOMM_COLL_REDUCE_SCATTER}) {
    const CrossHost x = cross_host(schedules("hier_ring", coll, view, 1000), hosts.node_of);
    EXPECT_GT(x.total, 0u);
    for (auto [from, to] : x.pairs) {
      EXPECT_EQ(local[static_cast<size_t>(from)], 0) << coll << ": " << from << " -> " << to;
      EXPECT_EQ(local[static_cast<size_t>(to)], 0) << coll << ": " << from << " -> " << to;
    }
  }
  const int root = 4;  // local rank 2 of host 1: its host's leader for this call
  const std::vector<bool> leader = {true, false, false, false, true, true};
  for (hcomm_coll_t coll : {HCOMM_COLL_BROADCAST, HCOMM_COLL_REDUCE}) {
    const CrossHost x = cross_host(schedules("hier_leader", coll, view, 1000, root), hosts.node_of);
    EXPECT_GT(x.total, 0u);
    for (auto [from, to] : x.pairs) EXPECT_TRUE(leader[static_cast<size_t>(from)] && leader[static_cast<size_t>(to)]);
  }
  const CrossHost x = cross_host(schedules("hier_leader", HCOMM_COLL_ALLREDUCE, view, 1000), hosts.node_of);
  const std::vector<bool> lowest = {true, true, false, false, false, true};
  for (auto [from, to] : x.pairs) EXPECT_TRUE(lowest[static_cast<size_t>(from)] && lowest[static_cast<size_t>(to)]);
}

// Every message of a hierarchical schedule belongs to a part, a flat
// collective over a host, a rail or the leaders (its match above 2^16).
TEST(HierarchicalParts, EveryMessageBelongsToAPart) {
  const Layout hosts = {"2_3_1_interleaved", {0, 1, 1, 0, 1, 2}};
  const View view = host_view(hosts);
  for (const AlgorithmEntry& e : hierarchical_entries()) {
    int messages = 0;
    for (const RankSchedule& r : schedules(e.desc->name, e.coll, view, 1000, 4))
      for (const hcomm_step_t& s : r.steps) {
        if (s.kind != HCOMM_STEP_SEND && s.kind != HCOMM_STEP_RECV && s.kind != HCOMM_STEP_RECV_REDUCE) continue;
        ++messages;
        EXPECT_GE(s.match >> 16, 1u) << e.id;
      }
    EXPECT_GT(messages, 0) << e.id;
  }
}

double cost_of(const hcomm_algorithm_desc_t& algo, const View& view, int nranks, uint64_t count) {
  const Case c = {.coll = static_cast<hcomm_coll_t>(std::countr_zero(algo.colls)),
                  .nranks = nranks,
                  .count = count,
                  .root = 0,
                  .in_place = false,
                  .chunking = &kChunkings[0],
                  .workload = {HCOMM_INT64, HCOMM_SUM},
                  .view = &view,
                  .seed = 1};
  const CallArgs args(c);
  const hcomm_comm_view_t comm = comm_view(nranks, 0, view);
  return algo.cost(&args.at(0), &comm);
}

// One host (node_of all 0, or no node_of at all): infinite cost, so the
// selector never prefers them; several hosts: a finite cost that grows.
TEST(HierarchicalOneHost, CostIsInfiniteOnOneHost) {
  const std::vector<AlgorithmEntry> entries = hierarchical_entries();
  ASSERT_EQ(entries.size(), 8u) << AlgorithmPlugins::get().load_error();
  const View one = host_view({"one", {0, 0, 0, 0}});
  const View unset = {.name = "unset", .flags = 0, .window_bytes = 0};
  const View two = host_view({"two", {0, 0, 1, 1}});
  for (const AlgorithmEntry& e : entries) {
    SCOPED_TRACE(e.id);
    for (uint64_t count : {0, 1, 1000, 1000000}) {
      EXPECT_TRUE(std::isinf(cost_of(*e.desc, one, 4, count)));
      EXPECT_TRUE(std::isinf(cost_of(*e.desc, unset, 4, count)));
      EXPECT_TRUE(std::isfinite(cost_of(*e.desc, two, 4, count)));
    }
    EXPECT_LT(cost_of(*e.desc, two, 4, 1000), cost_of(*e.desc, two, 4, 1000000));
  }
}

std::vector<const hcomm_algorithm_desc_t*> every_algorithm() {
  std::vector<const hcomm_algorithm_desc_t*> out;
  for (const hcomm_plugin_header_t* h : AlgorithmPlugins::get().headers())
    for (size_t i = 0; i < AlgorithmPlugins::iface(h)->num_algorithms; ++i)
      out.push_back(&AlgorithmPlugins::iface(h)->algorithms[i]);
  return out;
}

std::string winner(const View& view, int nranks, hcomm_coll_t coll, uint64_t bytes) {
  const hcomm_comm_view_t comm = comm_view(nranks, 0, view);
  const algorithm::ScoreMap map(comm, {}, every_algorithm());
  const algorithm::ScoreRange& range = map.find(coll, HCOMM_MEM_HOST, bytes);
  return range.order.empty() ? "none" : range.order.front()->name;
}

// The score map over every loaded algorithm: on one host no hierarchical
// algorithm wins; over 2 hosts of 4 ranks with a slower link between them,
// hier_ring takes large allreduces.
TEST(HierarchicalOneHost, SelectorPrefersThemOnlyAcrossHosts) {
  const View one = host_view({"one", std::vector<int>(8, 0)});
  const View two = host_view({"two", hosts_of_sizes({4, 4})});
  for (hcomm_coll_t coll :
       {HCOMM_COLL_ALLREDUCE, HCOMM_COLL_BROADCAST, HCOMM_COLL_REDUCE, HCOMM_COLL_ALLGATHER, HCOMM_COLL_REDUCE_SCATTER})
    for (uint64_t bytes : {8, 4096, 1 << 20, 64 << 20}) {
      const std::string name = winner(one, 8, coll, bytes);
      EXPECT_EQ(name.rfind("hier_", 0), std::string::npos) << coll << " " << bytes << ": " << name;
    }
  EXPECT_EQ(winner(two, 8, HCOMM_COLL_ALLREDUCE, 64 << 20), "hier_ring");
}

// Recursive doubling over 2 hosts of 2 ranks pairs ranks of one host in its
// first round: one round crosses hosts, against hier_ring's two, so it takes
// small allreduces; its cost counts the round within a host at that link.
TEST(HierarchicalOneHost, RecursiveDoublingCountsTheRoundWithinAHost) {
  const View two = host_view({"two", {0, 0, 1, 1}});
  EXPECT_EQ(winner(two, 4, HCOMM_COLL_ALLREDUCE, 8), "recursive_doubling");
  const View scattered = host_view({"scattered", {0, 1, 1, 0}});  // both rounds cross
  const hcomm_algorithm_desc_t* rd = nullptr;
  for (const hcomm_algorithm_desc_t* d : every_algorithm())
    if (std::string(d->name) == "recursive_doubling" && (d->colls & (1u << HCOMM_COLL_ALLREDUCE))) rd = d;
  ASSERT_NE(rd, nullptr);
  EXPECT_LT(cost_of(*rd, two, 4, 2), cost_of(*rd, scattered, 4, 2));
}

// From a few KiB on, hier_leader takes them: its leaders' exchange carries
// the message over each host's link once, where recursive doubling's round
// between hosts carries it once for every rank of the host.
TEST(HierarchicalOneHost, LeadersTakeMidSizedAllreduces) {
  const View two = host_view({"two", {0, 0, 1, 1}});
  EXPECT_EQ(winner(two, 4, HCOMM_COLL_ALLREDUCE, 16 << 10), "hier_leader");
  EXPECT_EQ(winner(two, 4, HCOMM_COLL_ALLREDUCE, 64 << 20), "hier_ring");
}

}  // namespace
}  // namespace hcomm::algotest
