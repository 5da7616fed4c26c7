// What the plugins register, and the schedule shapes that the executor's
// performance relies on for a few algorithms (pipelined chunks, no extra
// copies); correctness is the conformance suite's.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

#include "algorithm_plugins.hpp"
#include "algorithm_run.hpp"

namespace hcomm::algotest {
namespace {

TEST(AlgorithmPluginHeaders, DescribeTheirAlgorithms) {
  const AlgorithmPlugins& plugins = AlgorithmPlugins::get();
  EXPECT_EQ(plugins.load_error(), "");
  std::set<std::string> names;
  for (const hcomm_plugin_header_t* header : plugins.headers()) {
    const hcomm_plugin_header_t& h = *header;
    SCOPED_TRACE(h.name);
    names.insert(h.name);
    EXPECT_EQ(h.size, sizeof(hcomm_plugin_header_t));
    EXPECT_EQ(h.abi_major, HCOMM_PLUGIN_ABI_MAJOR);
    EXPECT_EQ(h.abi_minor, HCOMM_PLUGIN_ABI_MINOR);
    EXPECT_EQ(h.kind, HCOMM_PLUGIN_ALGORITHM);
    EXPECT_STREQ(h.vendor, "HComm");
    EXPECT_NE(std::string(h.version), "");
    const hcomm_algorithm_v1_t& iface = *AlgorithmPlugins::iface(header);
    EXPECT_EQ(iface.size, sizeof(hcomm_algorithm_v1_t));
    EXPECT_GE(iface.num_algorithms, 1u);
    for (size_t i = 0; i < iface.num_algorithms; ++i) {
      const hcomm_algorithm_desc_t& a = iface.algorithms[i];
      SCOPED_TRACE(a.name);
      EXPECT_EQ(a.size, sizeof(hcomm_algorithm_desc_t));
      EXPECT_NE(std::string(a.name), "");
      EXPECT_NE(a.colls, 0u) << "serves no collective";
      EXPECT_EQ(a.colls >> HCOMM_NUM_COLLS, 0u) << "serves an unknown collective";
      EXPECT_GE(a.min_ranks, 1);
      EXPECT_LE(a.min_ranks, a.max_ranks);
      EXPECT_LE(a.min_bytes, a.max_bytes);
      EXPECT_TRUE(a.mem_kinds & HCOMM_MEM_HOST);
      EXPECT_NE(a.cost, nullptr);
      EXPECT_NE(a.build, nullptr);
    }
  }
  for (const char* expected : {"ring", "tree", "recursive"}) EXPECT_TRUE(names.count(expected)) << expected;
  EXPECT_NE(plugins.find("ring", HCOMM_COLL_ALLREDUCE), nullptr);
  EXPECT_NE(plugins.find("binomial", HCOMM_COLL_BROADCAST), nullptr);
  EXPECT_NE(plugins.find("dissemination", HCOMM_COLL_BARRIER), nullptr);
}

#define ASSERT_ALGORITHM(var, name, coll)                                       \
  const hcomm_algorithm_desc_t* var = AlgorithmPlugins::get().find(name, coll); \
  ASSERT_NE(var, nullptr) << "no algorithm " << name << " in the plugins: " << AlgorithmPlugins::get().load_error()

const Chunking& chunking(const char* name) {
  for (const Chunking& c : kChunkings)
    if (std::string(c.name) == name) return c;
  throw std::logic_error(name);
}

// Every rank's schedule of a plain (not mapped) call.
std::vector<RankSchedule> built(const hcomm_algorithm_desc_t& algo, hcomm_coll_t coll, int nranks, uint64_t count,
                                int root, bool in_place, const char* chunks) {
  const Case c = {.coll = coll,
                  .nranks = nranks,
                  .count = count,
                  .root = root,
                  .in_place = in_place,
                  .chunking = &chunking(chunks),
                  .workload = {HCOMM_INT64, HCOMM_SUM},
                  .view = &kViews[0],
                  .seed = 1};
  const CallArgs args(c);
  Built b = build_all(algo, args, c);
  for (size_t r = 0; r < b.results.size(); ++r)
    EXPECT_EQ(b.results[r], HCOMM_SUCCESS) << "rank " << r << ": " << b.errors[r];
  return b.ranks;
}

TEST(AlgorithmShapes, RingAllreducePipelinesEveryTransferChunkWise) {
  ASSERT_ALGORITHM(ring, "ring", HCOMM_COLL_ALLREDUCE);
  const int n = 5;
  const auto ranks = built(*ring, HCOMM_COLL_ALLREDUCE, n, 1027, 0, false, "24B");
  ASSERT_EQ(ranks.size(), static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    const std::vector<hcomm_step_t>& steps = ranks[r].steps;
    ASSERT_EQ(steps.size(), 4u * (n - 1)) << "rank " << r;
    int finals = 0, sends = 0;
    for (size_t i = 0; i < steps.size(); ++i) {
      const hcomm_step_t& s = steps[i];
      EXPECT_NE(s.kind, HCOMM_STEP_COPY) << "rank " << r << " step " << i;
      EXPECT_EQ(s.nchunks, steps[0].nchunks) << "rank " << r << " step " << i;
      finals += (s.flags & HCOMM_STEP_FINAL) != 0;
      if (s.kind != HCOMM_STEP_SEND) continue;
      if (sends++ == 0) {
        EXPECT_EQ(s.src.buffer, static_cast<uint32_t>(HCOMM_BUF_SEND)) << "the first send reads the user's input";
        EXPECT_EQ(s.ndeps, 0u);
        continue;
      }
      ASSERT_EQ(s.ndeps, 1u) << "rank " << r << " step " << i;
      EXPECT_EQ(s.whole_deps, 0u) << "rank " << r << " step " << i << " waits for a whole step";
      EXPECT_EQ(s.src.buffer, static_cast<uint32_t>(HCOMM_BUF_RECV));
      EXPECT_EQ(steps[s.deps[0]].dst.offset, s.src.offset) << "forwards the block it received";
    }
    EXPECT_GT(steps[0].nchunks, 1u);
    EXPECT_EQ(finals, 1) << "rank " << r;
  }
}

TEST(AlgorithmShapes, RingAllreduceOnOneRankCopiesUnlessInPlace) {
  ASSERT_ALGORITHM(ring, "ring", HCOMM_COLL_ALLREDUCE);
  const auto copy = built(*ring, HCOMM_COLL_ALLREDUCE, 1, 9, 0, false, "whole");
  ASSERT_EQ(copy.size(), 1u);
  ASSERT_EQ(copy[0].steps.size(), 1u);
  EXPECT_EQ(copy[0].steps[0].kind, static_cast<uint32_t>(HCOMM_STEP_COPY));
  EXPECT_EQ(copy[0].steps[0].bytes, 72u);
  const auto in_place = built(*ring, HCOMM_COLL_ALLREDUCE, 1, 9, 0, true, "whole");
  ASSERT_EQ(in_place.size(), 1u);
  EXPECT_TRUE(in_place[0].steps.empty());
}

TEST(AlgorithmShapes, BinomialBroadcastForwardsChunksAsTheyArrive) {
  ASSERT_ALGORITHM(binomial, "binomial", HCOMM_COLL_BROADCAST);
  const int n = 7, root = 3;
  for (bool in_place : {false, true}) {
    const auto ranks = built(*binomial, HCOMM_COLL_BROADCAST, n, 100, root, in_place, "24B");
    ASSERT_EQ(ranks.size(), static_cast<size_t>(n));
    const std::vector<hcomm_step_t>& at_root = ranks[root].steps;
    ASSERT_FALSE(at_root.empty());
    EXPECT_EQ(at_root[0].kind == HCOMM_STEP_COPY, !in_place) << "the root copies its input unless in place";
    for (const hcomm_step_t& s : at_root) {
      if (s.kind == HCOMM_STEP_SEND) {
        EXPECT_EQ(s.src.buffer, static_cast<uint32_t>(HCOMM_BUF_SEND));
      }
    }
    for (int r = 0; r < n; ++r) {
      if (r == root) continue;
      const std::vector<hcomm_step_t>& steps = ranks[r].steps;
      ASSERT_FALSE(steps.empty());
      EXPECT_EQ(steps[0].kind, static_cast<uint32_t>(HCOMM_STEP_RECV)) << "rank " << r;
      EXPECT_GT(steps[0].nchunks, 1u);
      for (size_t i = 1; i < steps.size(); ++i) {
        EXPECT_EQ(steps[i].kind, static_cast<uint32_t>(HCOMM_STEP_SEND)) << "rank " << r << " step " << i;
        ASSERT_EQ(steps[i].ndeps, 1u);
        EXPECT_EQ(steps[i].deps[0], 0);
        EXPECT_EQ(steps[i].whole_deps, 0u) << "rank " << r << " step " << i << " waits for the whole message";
      }
    }
  }
}

TEST(AlgorithmShapes, DisseminationBarrierSendsEmptyMessagesInLog2Rounds) {
  ASSERT_ALGORITHM(barrier, "dissemination", HCOMM_COLL_BARRIER);
  for (int n = 1; n <= 33; ++n) {
    const auto ranks = built(*barrier, HCOMM_COLL_BARRIER, n, 0, 0, false, "whole");
    int rounds = 0;
    while ((1 << rounds) < n) ++rounds;
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(ranks[r].steps.size(), 2u * rounds) << "n " << n << " rank " << r;
      for (const hcomm_step_t& s : ranks[r].steps) EXPECT_EQ(s.bytes, 0u) << "n " << n << " rank " << r;
    }
  }
}

}  // namespace
}  // namespace hcomm::algotest
