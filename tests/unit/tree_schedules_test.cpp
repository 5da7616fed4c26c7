// Schedule shapes of the tree plugin that its cost model and its speed rely
// on (the conformance harness runs every algorithm against serial
// references): the radix "knomial" picks, the bytes each rank moves, one
// message per tree edge for gather and scatter, chunk-wise pipelining up and
// down the trees, where partial results are kept, and the costs themselves.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "algorithm_case.hpp"
#include "algorithm_plugins.hpp"
#include "plugins/algorithm/common/knomial.hpp"

namespace hcomm::algotest {
namespace {

using algo::KnomialTree;

// The harness's view (its vectors are built before any test runs, not
// before this file's statics).
hcomm_link_model_t link_model() { return comm_view(1, 0, kViews[0]).link; }

const hcomm_algorithm_desc_t* find(const char* name, hcomm_coll_t coll) {
  return AlgorithmPlugins::get().find(name, coll);
}

#define ASSERT_FOUND(var, name, coll)                                                \
  const hcomm_algorithm_desc_t* var = find(name, coll);                              \
  ASSERT_NE(var, nullptr) << "no " << (name) << " for collective " << (coll) << ": " \
                          << AlgorithmPlugins::get().load_error()

const Chunking& chunking(const char* name) {
  for (const Chunking& c : kChunkings)
    if (std::string(c.name) == name) return c;
  throw std::invalid_argument(name);
}

// Every rank's schedule for `coll` of `count` int64 elements.
std::vector<RankSchedule> build(const hcomm_algorithm_desc_t& algo, hcomm_coll_t coll, int nranks, uint64_t count,
                                int root = 0, bool in_place = false, const char* chunks = "24B") {
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
  Built built = build_all(algo, args, c);
  for (int r = 0; r < nranks; ++r)
    EXPECT_EQ(built.results[static_cast<size_t>(r)], HCOMM_SUCCESS)
        << algo.name << " rank " << r << ": " << built.errors[static_cast<size_t>(r)];
  return std::move(built.ranks);
}

bool is_transfer(const hcomm_step_t& s) { return s.kind <= HCOMM_STEP_RECV_REDUCE; }
bool receives(const hcomm_step_t& s) { return s.kind == HCOMM_STEP_RECV || s.kind == HCOMM_STEP_RECV_REDUCE; }

std::vector<const hcomm_step_t*> steps_of(const RankSchedule& r, bool (*keep)(const hcomm_step_t&)) {
  std::vector<const hcomm_step_t*> out;
  for (const hcomm_step_t& s : r.steps)
    if (keep(s)) out.push_back(&s);
  return out;
}

uint64_t bytes_of(const std::vector<const hcomm_step_t*>& steps) {
  uint64_t total = 0;
  for (const hcomm_step_t* s : steps) total += s->bytes;
  return total;
}

double cost(const hcomm_algorithm_desc_t& algo, hcomm_coll_t coll, int nranks, uint64_t count, int rank = 0,
            bool in_place = false) {
  const hcomm_coll_args_t args = {.size = sizeof(hcomm_coll_args_t),
                                  .coll = coll,
                                  .count = count,
                                  .dtype = HCOMM_INT64,
                                  .dtype_size = 8,
                                  .op = HCOMM_SUM,
                                  .root = 0,
                                  .in_place = in_place ? 1 : 0,
                                  .mem_kind = HCOMM_MEM_HOST};
  const hcomm_comm_view_t comm = comm_view(nranks, rank, kViews[0]);
  return algo.cost(&args, &comm);
}

constexpr hcomm_coll_t kKnomialColls[] = {HCOMM_COLL_BROADCAST, HCOMM_COLL_REDUCE, HCOMM_COLL_GATHER,
                                          HCOMM_COLL_SCATTER, HCOMM_COLL_BARRIER};

TEST(TreePlugin, RegistersEachAlgorithmForItsCollectives) {
  for (hcomm_coll_t coll : kKnomialColls) {
    EXPECT_NE(find("binomial", coll), nullptr) << coll;
    EXPECT_NE(find("knomial", coll), nullptr) << coll;
  }
  for (hcomm_coll_t coll : {HCOMM_COLL_ALLREDUCE, HCOMM_COLL_BROADCAST, HCOMM_COLL_REDUCE})
    EXPECT_NE(find("double_binary_tree", coll), nullptr) << coll;
  EXPECT_EQ(find("double_binary_tree", HCOMM_COLL_GATHER), nullptr);
  // The k-nomial reduce keeps rank order; the allreduce serves ops that do
  // not commute only.
  for (const char* name : {"binomial", "knomial"}) {
    EXPECT_EQ(find(name, HCOMM_COLL_REDUCE)->ordered_colls, 1u << HCOMM_COLL_REDUCE);
    EXPECT_EQ(find(name, HCOMM_COLL_BROADCAST)->ordered_colls, 0u);
    const hcomm_algorithm_desc_t* allreduce = find(name, HCOMM_COLL_ALLREDUCE);
    ASSERT_NE(allreduce, nullptr) << name;
    EXPECT_EQ(allreduce->ordered_colls, 1u << HCOMM_COLL_ALLREDUCE);
    hcomm_coll_args_t args = {.size = sizeof args,
                              .coll = HCOMM_COLL_ALLREDUCE,
                              .count = 100,
                              .dtype = HCOMM_INT64,
                              .dtype_size = 8,
                              .op = HCOMM_SUM};
    const hcomm_comm_view_t view = {.size = sizeof view,
                                    .rank = 0,
                                    .nranks = 5,
                                    .link = {.alpha_us = 5, .beta_us_per_byte = 1e-4, .gamma_us_per_byte = 1e-5}};
    EXPECT_TRUE(std::isinf(allreduce->cost(&args, &view))) << name;
    args.op = HCOMM_OP_USER_ORDERED;
    EXPECT_TRUE(std::isfinite(allreduce->cost(&args, &view))) << name;
  }
  EXPECT_EQ(find("double_binary_tree", HCOMM_COLL_ALLREDUCE)->ordered_colls, 0u);
}

// ---------------------------------------------------------------------------
// K-nomial trees.

// The root's sends in a broadcast name its children: 4 in a binomial tree
// of 16 ranks, 6 with radix 4 (4, 8, 12 and 1, 2, 3), 8 with radix 8.
TEST(Knomial, SmallMessagesTakeAWiderTreeLargeOnesTheBinomial) {
  ASSERT_FOUND(knomial, "knomial", HCOMM_COLL_BROADCAST);
  ASSERT_FOUND(binomial, "binomial", HCOMM_COLL_BROADCAST);
  const int n = 16;
  auto root_sends = [](const std::vector<RankSchedule>& ranks) {
    return steps_of(ranks[0], [](const hcomm_step_t& s) { return s.kind == HCOMM_STEP_SEND; }).size();
  };
  EXPECT_EQ(root_sends(build(*binomial, HCOMM_COLL_BROADCAST, n, 1)), 4u);
  // One element: latency decides; radix 4 and 8 both make two levels, and
  // radix 4 sends fewer copies.
  const std::vector<RankSchedule> small = build(*knomial, HCOMM_COLL_BROADCAST, n, 1);
  EXPECT_EQ(root_sends(small), 6u);
  for (int r = 1; r < n; ++r) {
    const auto recvs = steps_of(small[static_cast<size_t>(r)], receives);
    ASSERT_EQ(recvs.size(), 1u) << "rank " << r;
    EXPECT_EQ(recvs[0]->peer, KnomialTree(n, 4, 0, r).parent()) << "rank " << r;
  }
  // 8 MiB: bandwidth decides, and the binomial tree sends the fewest copies.
  const std::vector<RankSchedule> large = build(*knomial, HCOMM_COLL_BROADCAST, n, 1 << 20);
  const std::vector<RankSchedule> large_binomial = build(*binomial, HCOMM_COLL_BROADCAST, n, 1 << 20);
  for (int r = 0; r < n; ++r) {
    const std::vector<hcomm_step_t>& a = large[static_cast<size_t>(r)].steps;
    const std::vector<hcomm_step_t>& b = large_binomial[static_cast<size_t>(r)].steps;
    ASSERT_EQ(a.size(), b.size()) << "rank " << r;
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].kind, b[i].kind) << "rank " << r << " step " << i;
      EXPECT_EQ(a[i].peer, b[i].peer) << "rank " << r << " step " << i;
      EXPECT_EQ(a[i].bytes, b[i].bytes) << "rank " << r << " step " << i;
    }
  }
}

// A cost may not depend on the rank or on in_place, which rooted calls set on
// some ranks only: every rank must choose the same algorithm and radix.
TEST(Knomial, CostsFollowTheLinkModelAlikeOnEveryRank) {
  for (hcomm_coll_t coll : kKnomialColls)
    for (const char* name : {"binomial", "knomial"}) {
      ASSERT_FOUND(algo, name, coll);
      for (int n : {1, 2, 5, 16, 33})
        for (uint64_t count : {uint64_t{1}, uint64_t{1} << 20}) {
          const double at_root = cost(*algo, coll, n, count);
          EXPECT_GE(at_root, 0.0);
          EXPECT_EQ(cost(*algo, coll, n, count, n - 1, true), at_root) << name << " " << coll << " n " << n;
        }
    }
  ASSERT_FOUND(binomial, "binomial", HCOMM_COLL_BROADCAST);
  ASSERT_FOUND(reduce, "binomial", HCOMM_COLL_REDUCE);
  ASSERT_FOUND(gather, "binomial", HCOMM_COLL_GATHER);
  ASSERT_FOUND(barrier, "knomial", HCOMM_COLL_BARRIER);
  const hcomm_link_model_t l = link_model();
  const double b = 8000;  // 1000 int64
  // ceil(log2 n) levels; the root sends (or receives and reduces) the message once per child.
  EXPECT_DOUBLE_EQ(cost(*binomial, HCOMM_COLL_BROADCAST, 5, 1000), 3 * (l.alpha_us + b * l.beta_us_per_byte));
  EXPECT_DOUBLE_EQ(cost(*reduce, HCOMM_COLL_REDUCE, 5, 1000),
                   3 * (l.alpha_us + b * (l.beta_us_per_byte + l.gamma_us_per_byte)));
  // Gather over 5 ranks, radix 2: the chain runs from the root, which
  // receives 4 blocks, through rank 2, the largest subtree (2 and 3).
  EXPECT_DOUBLE_EQ(cost(*gather, HCOMM_COLL_GATHER, 5, 1000), 2 * l.alpha_us + (4 + 1) * b * l.beta_us_per_byte);
  // Barrier over 33 ranks: radix 8 makes two levels, up and down.
  EXPECT_DOUBLE_EQ(cost(*barrier, HCOMM_COLL_BARRIER, 33, 0), 4 * l.alpha_us);
  for (hcomm_coll_t coll : kKnomialColls) {
    ASSERT_FOUND(k, "knomial", coll);
    ASSERT_FOUND(two, "binomial", coll);
    EXPECT_LE(cost(*k, coll, 33, 1), cost(*two, coll, 33, 1)) << coll;
    EXPECT_LT(cost(*k, coll, 33, 1), cost(*two, coll, 33, 1)) << "a wider tree saves latency for " << coll;
  }
}

// Partial results of a reduce go to SCRATCH: SEND is the caller's and RECV
// is the root's only, where the one FINAL reduction lands.
TEST(TreeReduce, PartialResultsStayOutOfTheCallersBuffers) {
  for (const char* name : {"binomial", "knomial", "double_binary_tree"}) {
    ASSERT_FOUND(algo, name, HCOMM_COLL_REDUCE);
    for (int n : {2, 3, 5, 8, 13})
      for (int root : {0, n / 2, n - 1}) {
        SCOPED_TRACE(testing::Message() << name << " n " << n << " root " << root);
        const std::vector<RankSchedule> ranks = build(*algo, HCOMM_COLL_REDUCE, n, 100, root);
        for (int r = 0; r < n; ++r) {
          int finals = 0;
          for (const hcomm_step_t& s : ranks[static_cast<size_t>(r)].steps) {
            if (s.flags & HCOMM_STEP_FINAL) {
              ++finals;
              EXPECT_EQ(s.dst.buffer, static_cast<uint32_t>(HCOMM_BUF_RECV));
            }
            if (r == root) continue;
            const bool reads = s.kind != HCOMM_STEP_RECV, writes = s.kind != HCOMM_STEP_SEND;
            EXPECT_FALSE(reads && s.src.buffer == HCOMM_BUF_RECV) << "rank " << r << " reads RECV";
            EXPECT_FALSE(writes && s.dst.buffer == HCOMM_BUF_RECV) << "rank " << r << " writes RECV";
          }
          // The double binary tree's root finishes one half per tree.
          const int expected = r != root ? 0 : std::string(name) == "double_binary_tree" ? 2 : 1;
          EXPECT_EQ(finals, expected) << "rank " << r;
        }
      }
  }
}

// Gather and scatter move each subtree's blocks in one message per edge:
// every rank but the root sends (gather) or receives (scatter) exactly one,
// of its subtree's blocks.
TEST(KnomialGatherScatter, OneMessagePerEdge) {
  for (hcomm_coll_t coll : {HCOMM_COLL_GATHER, HCOMM_COLL_SCATTER}) {
    ASSERT_FOUND(algo, "binomial", coll);
    const bool gather = coll == HCOMM_COLL_GATHER;
    for (int n : {1, 2, 3, 6, 7, 12})
      for (int root = 0; root < n; ++root) {
        SCOPED_TRACE(testing::Message() << (gather ? "gather" : "scatter") << " n " << n << " root " << root);
        const uint64_t block = 3 * 8;
        const std::vector<RankSchedule> ranks = build(*algo, coll, n, 3, root);
        uint64_t root_bytes = 0;
        for (int r = 0; r < n; ++r) {
          const auto sends =
              steps_of(ranks[static_cast<size_t>(r)], [](const hcomm_step_t& s) { return s.kind == HCOMM_STEP_SEND; });
          const auto recvs = steps_of(ranks[static_cast<size_t>(r)], receives);
          const auto& toward_root = gather ? sends : recvs;
          if (r == root) {
            EXPECT_TRUE(toward_root.empty());
            root_bytes = bytes_of(gather ? recvs : sends);
            continue;
          }
          ASSERT_EQ(toward_root.size(), 1u) << "rank " << r;
          const KnomialTree tree(n, 2, root, r);
          EXPECT_EQ(toward_root[0]->peer, tree.parent()) << "rank " << r;
          EXPECT_EQ(toward_root[0]->bytes, static_cast<uint64_t>(tree.subtree_size()) * block) << "rank " << r;
        }
        EXPECT_EQ(root_bytes, static_cast<uint64_t>(n - 1) * block);
      }
  }
}

// A barrier's root with more children than a step can wait for joins them
// through empty steps: 33 ranks make radix 8, and the root 11 children.
TEST(KnomialBarrier, ManyChildrenJoinThroughEmptySteps) {
  ASSERT_FOUND(barrier, "knomial", HCOMM_COLL_BARRIER);
  const int n = 33;
  const std::vector<RankSchedule> ranks = build(*barrier, HCOMM_COLL_BARRIER, n, 0);
  size_t transfers = 0;
  for (int r = 0; r < n; ++r)
    for (const hcomm_step_t& s : ranks[static_cast<size_t>(r)].steps) {
      EXPECT_EQ(s.bytes, 0u);
      EXPECT_LE(s.ndeps, static_cast<uint32_t>(HCOMM_STEP_MAX_DEPS));
      transfers += s.kind == HCOMM_STEP_SEND;
    }
  EXPECT_EQ(transfers, 2u * (n - 1)) << "one message each way per edge";
  const auto root_receives = steps_of(ranks[0], receives);
  EXPECT_EQ(root_receives.size(), 11u);
  EXPECT_FALSE(steps_of(ranks[0], [](const hcomm_step_t& s) { return s.kind == HCOMM_STEP_COPY; }).empty());
}

// ---------------------------------------------------------------------------
// Double binary trees.

// Each half goes up and down its tree once: a rank sends and receives at
// most twice the message (two halves of it in each direction, over both
// trees), every transfer pipelined chunk by chunk, and the two tops finish a
// half each.
TEST(DoubleBinaryTreeAllreduce, EveryRankMovesAtMostTwiceTheMessage) {
  ASSERT_FOUND(algo, "double_binary_tree", HCOMM_COLL_ALLREDUCE);
  for (int n : {2, 3, 4, 5, 7, 8, 12, 13, 17}) {
    SCOPED_TRACE(testing::Message() << "n " << n);
    const uint64_t count = 1027, half = (count + 1) / 2 * 8;
    const std::vector<RankSchedule> ranks = build(*algo, HCOMM_COLL_ALLREDUCE, n, count);
    int finals = 0;
    for (int r = 0; r < n; ++r) {
      const RankSchedule& rank = ranks[static_cast<size_t>(r)];
      EXPECT_LE(bytes_of(steps_of(rank, [](const hcomm_step_t& s) { return s.kind == HCOMM_STEP_SEND; })), 4 * half);
      EXPECT_LE(bytes_of(steps_of(rank, receives)), 4 * half);
      for (const hcomm_step_t& s : rank.steps) {
        EXPECT_TRUE(is_transfer(s)) << "rank " << r;
        EXPECT_GT(s.nchunks, 1u) << "rank " << r;
        EXPECT_EQ(s.whole_deps, 0u) << "rank " << r << " waits for a whole step";
        finals += (s.flags & HCOMM_STEP_FINAL) != 0;
      }
    }
    EXPECT_EQ(finals, 2);
  }
}

// The root sends (broadcast) or receives (reduce) each half once.
TEST(DoubleBinaryTreeRooted, RootMovesEachHalfOnce) {
  for (hcomm_coll_t coll : {HCOMM_COLL_BROADCAST, HCOMM_COLL_REDUCE}) {
    ASSERT_FOUND(algo, "double_binary_tree", coll);
    for (int n : {2, 3, 6, 9})
      for (int root = 0; root < n; ++root) {
        SCOPED_TRACE(testing::Message() << coll << " n " << n << " root " << root);
        const std::vector<RankSchedule> ranks = build(*algo, coll, n, 101, root, true);
        const auto moved = steps_of(ranks[static_cast<size_t>(root)], is_transfer);
        ASSERT_EQ(moved.size(), 2u);
        EXPECT_EQ(bytes_of(moved), 101u * 8);
        EXPECT_NE(moved[0]->bytes, 0u);
        if (n > 2) {
          EXPECT_NE(moved[0]->peer, moved[1]->peer) << "each half has its own tree";
        }
      }
  }
}

TEST(DoubleBinaryTree, CostsFollowTheLinkModel) {
  ASSERT_FOUND(allreduce, "double_binary_tree", HCOMM_COLL_ALLREDUCE);
  ASSERT_FOUND(broadcast, "double_binary_tree", HCOMM_COLL_BROADCAST);
  ASSERT_FOUND(reduce, "double_binary_tree", HCOMM_COLL_REDUCE);
  const double b = 8000;
  const hcomm_link_model_t l = link_model();
  // 2 ceil(log2 n) latencies; twice the message each way; the message reduced once.
  EXPECT_DOUBLE_EQ(cost(*allreduce, HCOMM_COLL_ALLREDUCE, 9, 1000),
                   8 * l.alpha_us + 2 * b * l.beta_us_per_byte + b * l.gamma_us_per_byte);
  // One edge from the root, then ceil(log2(n - 1)).
  EXPECT_DOUBLE_EQ(cost(*broadcast, HCOMM_COLL_BROADCAST, 9, 1000), 4 * l.alpha_us + b * l.beta_us_per_byte);
  EXPECT_DOUBLE_EQ(cost(*reduce, HCOMM_COLL_REDUCE, 9, 1000),
                   4 * l.alpha_us + b * (l.beta_us_per_byte + l.gamma_us_per_byte));
  EXPECT_EQ(cost(*allreduce, HCOMM_COLL_ALLREDUCE, 1, 1000), 0.0);
  EXPECT_EQ(cost(*broadcast, HCOMM_COLL_BROADCAST, 9, 1000, 4, true), cost(*broadcast, HCOMM_COLL_BROADCAST, 9, 1000));
}

}  // namespace
}  // namespace hcomm::algotest
