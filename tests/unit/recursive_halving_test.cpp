// The folded hypercube of recursive halving and doubling, for every
// communicator size 1..33: the fold pairs, the virtual ranks, the peers of
// every round, and the data each rank holds after each round of both phases.
#include "plugins/algorithm/common/recursive_halving.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace hcomm::algo {
namespace {

constexpr int kMaxRanks = 33;

class FoldedHypercubeTest : public ::testing::TestWithParam<int> {
 protected:
  int n() const { return GetParam(); }
  std::vector<FoldedHypercube> cubes() const {
    std::vector<FoldedHypercube> out;
    for (int r = 0; r < n(); ++r) out.emplace_back(n(), r);
    return out;
  }
};

TEST_P(FoldedHypercubeTest, SizeIsTheLargestPowerOfTwoNotAboveN) {
  const FoldedHypercube cube(n(), 0);
  EXPECT_EQ(cube.size(), 1 << cube.rounds());
  EXPECT_LE(cube.size(), n());
  EXPECT_GT(2 * cube.size(), n());
}

// The first 2(n - p) ranks pair up, even into odd; the rest stand alone.
TEST_P(FoldedHypercubeTest, FoldPairsEvenRanksIntoTheirOddNeighbours) {
  const auto all = cubes();
  const int extras = n() - all[0].size();
  int folded_out = 0;
  for (int r = 0; r < n(); ++r) {
    SCOPED_TRACE(testing::Message() << "rank " << r);
    const FoldedHypercube& c = all[r];
    const bool paired = r < 2 * extras;
    EXPECT_EQ(c.fold_partner(), paired ? (r ^ 1) : -1);
    EXPECT_EQ(c.folded_out(), paired && r % 2 == 0);
    EXPECT_EQ(c.folded_in(), paired && r % 2 == 1);
    if (paired) {
      EXPECT_EQ(all[c.fold_partner()].fold_partner(), r);
      EXPECT_NE(c.folded_out(), all[c.fold_partner()].folded_out());
    }
    folded_out += c.folded_out();
  }
  EXPECT_EQ(folded_out, extras);
}

// The ranks that take part get virtual ranks 0..p-1 in rank order, and a
// virtual rank stands for its own rank and its folded partner, which are the
// ranks first_rank(v)..first_rank(v + 1) - 1.
TEST_P(FoldedHypercubeTest, VirtualRanksNumberTheTakingPartInRankOrder) {
  const auto all = cubes();
  const int p = all[0].size();
  int next = 0;
  for (int r = 0; r < n(); ++r) {
    const FoldedHypercube& c = all[r];
    if (c.folded_out()) {
      EXPECT_EQ(c.vrank(), -1) << "rank " << r;
      continue;
    }
    EXPECT_EQ(c.vrank(), next++) << "rank " << r;
    EXPECT_EQ(c.rank_of(c.vrank()), r);
  }
  EXPECT_EQ(next, p);
  EXPECT_EQ(all[0].first_rank(0), 0);
  EXPECT_EQ(all[0].first_rank(p), n());
  for (int v = 0; v < p; ++v) {
    std::set<int> stands_for = {all[0].rank_of(v)};
    if (all[all[0].rank_of(v)].folded_in()) stands_for.insert(all[all[0].rank_of(v)].fold_partner());
    std::set<int> range;
    for (int r = all[0].first_rank(v); r < all[0].first_rank(v + 1); ++r) range.insert(r);
    EXPECT_EQ(stands_for, range) << "virtual rank " << v;
  }
}

// At every distance partners are mutual, one of each pair is the lower, and
// both see the same merged group.
TEST_P(FoldedHypercubeTest, PartnersAreMutualAtEveryDistance) {
  const auto all = cubes();
  for (int r = 0; r < n(); ++r) {
    const FoldedHypercube& c = all[r];
    if (c.folded_out()) continue;
    for (int round = 0; round < c.rounds(); ++round) {
      for (int64_t d : {FoldedHypercube::doubling_distance(round), c.halving_distance(round)}) {
        SCOPED_TRACE(testing::Message() << "rank " << r << " distance " << d);
        const int peer = c.peer(d);
        ASSERT_GE(peer, 0);
        ASSERT_LT(peer, n());
        ASSERT_NE(peer, r);
        const FoldedHypercube& other = all[peer];
        EXPECT_FALSE(other.folded_out());
        EXPECT_EQ(other.peer(d), r);
        EXPECT_NE(c.lower(d), other.lower(d));
        EXPECT_EQ(c.group(2 * d), other.group(2 * d));
        EXPECT_EQ(c.group(d) ^ d, other.group(d));
      }
    }
  }
}

TEST_P(FoldedHypercubeTest, HalvingDistancesAreDoublingDistancesReversed) {
  const FoldedHypercube c(n(), 0);
  for (int round = 0; round < c.rounds(); ++round)
    EXPECT_EQ(c.halving_distance(round), FoldedHypercube::doubling_distance(c.rounds() - 1 - round));
}

// Doubling as an allgather: each rank starts with the ranks it stands for
// and adds its partner's in every round. After round k it holds exactly the
// consecutive ranks its group of 2^(k+1) stands for; after the last, all.
TEST_P(FoldedHypercubeTest, DoublingGathersConsecutiveRanges) {
  const auto all = cubes();
  std::vector<std::set<int>> held(n());
  for (int r = 0; r < n(); ++r)
    if (!all[r].folded_out())
      for (int s = all[r].first_rank(all[r].vrank()); s < all[r].first_rank(all[r].vrank() + 1); ++s) held[r].insert(s);
  for (int round = 0; round < all[0].rounds(); ++round) {
    const int64_t d = FoldedHypercube::doubling_distance(round);
    std::vector<std::set<int>> next = held;
    for (int r = 0; r < n(); ++r)
      if (!all[r].folded_out()) next[r].insert(held[all[r].peer(d)].begin(), held[all[r].peer(d)].end());
    held = next;
    for (int r = 0; r < n(); ++r) {
      if (all[r].folded_out()) continue;
      const int64_t first = all[r].group(2 * d);
      std::set<int> range;
      for (int s = all[r].first_rank(first); s < all[r].first_rank(first + 2 * d); ++s) range.insert(s);
      EXPECT_EQ(held[r], range) << "rank " << r << " after round " << round;
    }
  }
  for (int r = 0; r < n(); ++r) {
    if (!all[r].folded_out()) {
      EXPECT_EQ(held[r].size(), static_cast<size_t>(n())) << "rank " << r;
    }
  }
}

// Halving as a reduce-scatter over p parts: in round k partners split the
// segment they share, each keeping the half of its own virtual rank, and
// each half reaches the partner that keeps it. At the end virtual rank v
// holds part v, summed over every virtual rank.
TEST_P(FoldedHypercubeTest, HalvingLeavesEachVirtualRankItsOwnPart) {
  const auto all = cubes();
  const int p = all[0].size();
  // sums[v][part]: how many virtual ranks' inputs virtual rank v holds summed for that part.
  std::vector<std::vector<int>> sums(p, std::vector<int>(p, 1));
  std::vector<std::pair<int64_t, int64_t>> segment(p, {0, p});
  for (int round = 0; round < all[0].rounds(); ++round) {
    std::vector<std::vector<int>> next = sums;
    std::vector<std::pair<int64_t, int64_t>> next_segment = segment;
    for (int v = 0; v < p; ++v) {
      const FoldedHypercube& c = all[all[0].rank_of(v)];
      const int64_t d = c.halving_distance(round);
      const int peer = all[c.peer(d)].vrank();
      ASSERT_EQ(segment[v], segment[peer]) << "virtual rank " << v << " round " << round;
      ASSERT_EQ(segment[v].first, c.group(2 * d));
      ASSERT_EQ(segment[v].second - segment[v].first, 2 * d);
      const int64_t keep = c.lower(d) ? c.group(2 * d) : c.group(2 * d) + d;
      EXPECT_TRUE(v >= keep && v < keep + d) << "virtual rank " << v << " keeps a half without its own part";
      for (int64_t part = keep; part < keep + d; ++part) next[v][part] = sums[v][part] + sums[peer][part];
      next_segment[v] = {keep, keep + d};
    }
    sums = next;
    segment = next_segment;
  }
  for (int v = 0; v < p; ++v) {
    EXPECT_EQ(segment[v], std::make_pair(int64_t{v}, int64_t{v} + 1));
    EXPECT_EQ(sums[v][v], p) << "virtual rank " << v;
  }
}

// One size spelled out: n = 6 folds ranks 0 and 2 into 1 and 3.
TEST(FoldedHypercubeExample, SixRanks) {
  const std::vector<int> vranks = {-1, 0, -1, 1, 2, 3};
  const std::vector<std::vector<int>> doubling_peers = {{}, {3, 4}, {}, {1, 5}, {5, 1}, {4, 3}};
  const std::vector<std::vector<int>> halving_peers = {{}, {4, 3}, {}, {5, 1}, {1, 5}, {3, 4}};
  for (int r = 0; r < 6; ++r) {
    const FoldedHypercube c(6, r);
    EXPECT_EQ(c.vrank(), vranks[r]) << "rank " << r;
    if (c.folded_out()) {
      EXPECT_EQ(c.fold_partner(), r + 1);
      continue;
    }
    std::vector<int> doubling, halving;
    for (int round = 0; round < c.rounds(); ++round) {
      doubling.push_back(c.peer(FoldedHypercube::doubling_distance(round)));
      halving.push_back(c.peer(c.halving_distance(round)));
    }
    EXPECT_EQ(doubling, doubling_peers[r]) << "rank " << r;
    EXPECT_EQ(halving, halving_peers[r]) << "rank " << r;
  }
}

std::string size_name(const ::testing::TestParamInfo<int>& info) { return "n" + std::to_string(info.param); }

INSTANTIATE_TEST_SUITE_P(Sizes, FoldedHypercubeTest, ::testing::Range(1, kMaxRanks + 1), size_name);

}  // namespace
}  // namespace hcomm::algo
