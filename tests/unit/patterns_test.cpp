// Peer patterns shared by the algorithm plugins, for every communicator size
// 1..33 and every root: the properties the algorithms built on them rely on.
#include "plugins/algorithm/common/patterns.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <queue>
#include <set>
#include <vector>

namespace hcomm::algo {
namespace {

constexpr int kMaxRanks = 33;

class PatternTest : public ::testing::TestWithParam<int> {
 protected:
  int n() const { return GetParam(); }
};

TEST(CeilLog2, SmallValues) {
  EXPECT_EQ(ceil_log2(0), 0);
  EXPECT_EQ(ceil_log2(1), 0);
  EXPECT_EQ(ceil_log2(2), 1);
  EXPECT_EQ(ceil_log2(3), 2);
  EXPECT_EQ(ceil_log2(4), 2);
  EXPECT_EQ(ceil_log2(5), 3);
  EXPECT_EQ(ceil_log2(33), 6);
  EXPECT_EQ(ceil_log2(int64_t{1} << 31), 31);
  EXPECT_EQ(ceil_log2((int64_t{1} << 31) - 1), 31);
}

TEST(Wrap, NegativeAndLarge) {
  EXPECT_EQ(wrap(-1, 5), 4);
  EXPECT_EQ(wrap(-10, 5), 0);
  EXPECT_EQ(wrap(7, 5), 2);
  EXPECT_EQ(wrap(int64_t{2147483647} + 2147483647, 2147483647), 0);
}

TEST_P(PatternTest, RingNeighboursFormOneCycle) {
  std::vector<bool> seen(n(), false);
  int at = 0;
  for (int hop = 0; hop < n(); ++hop) {
    ASSERT_FALSE(seen[at]) << "rank " << at << " visited twice";
    seen[at] = true;
    const Ring ring(n(), at);
    ASSERT_EQ(Ring(n(), ring.next()).prev(), at);
    at = ring.next();
  }
  EXPECT_EQ(at, 0);
}

// What a rank sends at step t is what its next rank receives at step t, and
// what it receives at step t it sends at step t + 1.
TEST_P(PatternTest, RingBlocksFlowToTheNextRank) {
  for (int rank = 0; rank < n(); ++rank) {
    const Ring ring(n(), rank);
    const Ring next(n(), ring.next());
    for (int t = 0; t < 2 * n(); ++t) {
      EXPECT_EQ(ring.sent_block(t, rank), next.received_block(t, ring.next())) << "rank " << rank << " step " << t;
      EXPECT_EQ(ring.received_block(t, rank), ring.sent_block(t + 1, rank)) << "rank " << rank << " step " << t;
    }
  }
}

// Allreduce use: over steps 0..n-2 a rank receives every block but its own
// exactly once and ends owning block rank + 1; over steps n-1..2n-3 it
// receives every block but the one it owns.
TEST_P(PatternTest, RingCoversEveryBlockOncePerPhase) {
  for (int rank = 0; rank < n(); ++rank) {
    const Ring ring(n(), rank);
    const int owned = wrap(rank + 1, n());
    std::set<int> reduced, gathered;
    for (int t = 0; t < n() - 1; ++t) reduced.insert(ring.received_block(t, rank));
    for (int t = n() - 1; t < 2 * (n() - 1); ++t) gathered.insert(ring.received_block(t, rank));
    EXPECT_EQ(reduced.size(), static_cast<size_t>(n() - 1));
    EXPECT_EQ(reduced.count(rank), 0u);
    EXPECT_EQ(gathered.size(), static_cast<size_t>(n() - 1));
    EXPECT_EQ(gathered.count(owned), 0u);
    if (n() > 1) {
      EXPECT_EQ(ring.received_block(n() - 2, rank), owned);
    }
  }
}

// The tree as a whole: parents and children agree, every rank but the root
// has one parent, the root reaches everyone.
TEST_P(PatternTest, BinomialTreeIsASpanningTreeForEveryRoot) {
  for (int root = 0; root < n(); ++root) {
    SCOPED_TRACE(testing::Message() << "root " << root);
    std::vector<int> parent_of(n(), -2);
    for (int rank = 0; rank < n(); ++rank) {
      const BinomialTree tree(n(), root, rank);
      EXPECT_EQ(tree.is_root(), rank == root);
      if (rank == root) {
        EXPECT_EQ(tree.parent(), -1);
        continue;
      }
      const int parent = tree.parent();
      ASSERT_GE(parent, 0);
      ASSERT_LT(parent, n());
      ASSERT_NE(parent, rank);
      const std::vector<int> siblings = BinomialTree(n(), root, parent).children();
      EXPECT_EQ(std::count(siblings.begin(), siblings.end(), rank), 1) << "rank " << rank << " parent " << parent;
    }
    std::vector<bool> reached(n(), false);
    std::queue<int> frontier;
    frontier.push(root);
    reached[root] = true;
    int count = 1;
    while (!frontier.empty()) {
      const int rank = frontier.front();
      frontier.pop();
      for (int child : BinomialTree(n(), root, rank).children()) {
        ASSERT_EQ(BinomialTree(n(), root, child).parent(), rank);
        ASSERT_FALSE(reached[child]) << "rank " << child << " reached twice";
        reached[child] = true;
        ++count;
        frontier.push(child);
      }
    }
    EXPECT_EQ(count, n());
  }
}

// With one send per round, in children order, the last rank has the data
// after exactly ceil(log2 n) rounds; the height is at most that.
TEST_P(PatternTest, BinomialTreeFinishesInCeilLog2Rounds) {
  for (int root = 0; root < n(); ++root) {
    SCOPED_TRACE(testing::Message() << "root " << root);
    std::vector<int> round_of(n(), -1), depth_of(n(), -1);
    round_of[root] = depth_of[root] = 0;
    std::queue<int> frontier;
    frontier.push(root);
    while (!frontier.empty()) {
      const int rank = frontier.front();
      frontier.pop();
      int round = round_of[rank];
      for (int child : BinomialTree(n(), root, rank).children()) {
        round_of[child] = ++round;
        depth_of[child] = depth_of[rank] + 1;
        frontier.push(child);
      }
    }
    EXPECT_EQ(*std::max_element(round_of.begin(), round_of.end()), ceil_log2(n()));
    EXPECT_LE(*std::max_element(depth_of.begin(), depth_of.end()), ceil_log2(n()));
    EXPECT_EQ(static_cast<int>(BinomialTree(n(), root, root).children().size()), ceil_log2(n()));
  }
}

TEST_P(PatternTest, BinomialChildrenComeFarthestFirst) {
  for (int root = 0; root < n(); ++root)
    for (int rank = 0; rank < n(); ++rank) {
      const std::vector<int> children = BinomialTree(n(), root, rank).children();
      for (size_t i = 1; i < children.size(); ++i) {
        EXPECT_GT(wrap(children[i - 1] - rank, n()), wrap(children[i] - rank, n()))
            << "root " << root << " rank " << rank << " child " << i;
      }
    }
}

TEST_P(PatternTest, DisseminationPeersPairUp) {
  for (int rank = 0; rank < n(); ++rank) {
    const Dissemination pattern(n(), rank);
    EXPECT_EQ(pattern.rounds(), ceil_log2(n()));
    for (int k = 0; k < pattern.rounds(); ++k) {
      EXPECT_NE(pattern.send_peer(k), rank);
      EXPECT_EQ(Dissemination(n(), pattern.send_peer(k)).recv_peer(k), rank) << "rank " << rank << " round " << k;
    }
  }
}

// Every rank has heard from every rank after the last round, and from not
// all of them one round earlier: no round is wasted.
TEST_P(PatternTest, DisseminationInformsEveryoneInTheLastRound) {
  std::vector<std::vector<bool>> heard(n(), std::vector<bool>(n(), false));
  for (int rank = 0; rank < n(); ++rank) heard[rank][rank] = true;
  auto everyone_heard_all = [&] {
    return std::all_of(heard.begin(), heard.end(), [](const std::vector<bool>& h) {
      return std::all_of(h.begin(), h.end(), [](bool b) { return b; });
    });
  };
  const int rounds = Dissemination(n(), 0).rounds();
  for (int k = 0; k < rounds; ++k) {
    EXPECT_FALSE(everyone_heard_all()) << "complete before round " << k;
    const std::vector<std::vector<bool>> before = heard;
    for (int rank = 0; rank < n(); ++rank) {
      const int to = Dissemination(n(), rank).send_peer(k);
      for (int source = 0; source < n(); ++source)
        if (before[rank][source]) heard[to][source] = true;
    }
  }
  EXPECT_TRUE(everyone_heard_all());
}

std::string rank_count_name(const ::testing::TestParamInfo<int>& param) { return "n" + std::to_string(param.param); }

INSTANTIATE_TEST_SUITE_P(Ranks, PatternTest, ::testing::Range(1, kMaxRanks + 1), rank_count_name);

}  // namespace
}  // namespace hcomm::algo
