// Bruck's rounds, for every communicator size 1..33: the peers of every
// round, and where every block is after each round of the allgather and the
// alltoall, followed block by block over all ranks.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "plugins/algorithm/common/bruck.hpp"

namespace hcomm::algo {
namespace {

constexpr int kMaxRanks = 33;

class BruckTest : public ::testing::TestWithParam<int> {
 protected:
  int n() const { return GetParam(); }
};

TEST_P(BruckTest, RoundsAreCeilLog2) {
  const Bruck b(n(), 0);
  EXPECT_EQ(b.rounds(), ceil_log2(n()));
  for (int round = 0; round < b.rounds(); ++round) EXPECT_LT(Bruck::distance(round), n());
}

// Each round's sender and receiver name each other, at distance 2^k.
TEST_P(BruckTest, PeersAreMutual) {
  for (int r = 0; r < n(); ++r) {
    const Bruck b(n(), r);
    for (int round = 0; round < b.rounds(); ++round) {
      SCOPED_TRACE(testing::Message() << "rank " << r << " round " << round);
      EXPECT_EQ(Bruck(n(), b.allgather_to(round)).allgather_from(round), r);
      EXPECT_EQ(Bruck(n(), b.alltoall_to(round)).alltoall_from(round), r);
      EXPECT_EQ(b.allgather_to(round), wrap(int64_t{r} - Bruck::distance(round), n()));
      EXPECT_EQ(b.alltoall_to(round), wrap(int64_t{r} + Bruck::distance(round), n()));
      EXPECT_NE(b.allgather_to(round), r);
    }
  }
}

// Every rank's buffer, index i holding the block of some rank (-1: empty).
// In round k a rank sends its first allgather_blocks(k) indices, all filled,
// and they land at index 2^k of the receiver, on empty indices; at the end
// index i holds the block of rank + i.
TEST_P(BruckTest, AllgatherFillsIndexIWithRankPlusI) {
  std::vector<std::vector<int>> held(n(), std::vector<int>(n(), -1));
  for (int r = 0; r < n(); ++r) held[r][0] = r;
  for (int round = 0; round < Bruck(n(), 0).rounds(); ++round) {
    std::vector<std::vector<int>> next = held;
    for (int r = 0; r < n(); ++r) {
      const Bruck b(n(), r);
      const int count = b.allgather_blocks(round);
      ASSERT_GE(count, 1);
      const int to = b.allgather_to(round);
      EXPECT_EQ(Bruck(n(), to).allgather_blocks(round), count);
      for (int i = 0; i < count; ++i) {
        const int64_t at = Bruck::distance(round) + i;
        ASSERT_LT(at, n());
        EXPECT_NE(held[r][i], -1) << "rank " << r << " sends empty index " << i << " in round " << round;
        EXPECT_EQ(held[to][at], -1) << "rank " << to << " index " << at << " filled twice";
        next[to][at] = held[r][i];
      }
    }
    held = next;
  }
  for (int r = 0; r < n(); ++r)
    for (int i = 0; i < n(); ++i) EXPECT_EQ(held[r][i], wrap(int64_t{r} + i, n())) << "rank " << r << " index " << i;
}

TEST_P(BruckTest, AlltoallRunsAreTheIndicesWithTheRoundsBitSet) {
  const Bruck b(n(), 0);
  for (int round = 0; round < b.rounds(); ++round) {
    std::vector<int> indices;
    int previous_end = -1;
    for (const BlockRun& run : b.alltoall_runs(round)) {
      EXPECT_GT(run.count, 0);
      EXPECT_GT(run.first, previous_end) << "runs overlap, touch or go backwards";
      previous_end = run.first + run.count;
      for (int i = run.first; i < run.first + run.count; ++i) indices.push_back(i);
    }
    std::vector<int> expected;
    for (int i = 0; i < n(); ++i)
      if (i & (1 << round)) expected.push_back(i);
    EXPECT_EQ(indices, expected) << "round " << round;
  }
}

// Index i of a rank starts as its block for rank + i, as (source, destination).
// A block moves with the bits of its index, so at the end it has arrived:
// index i of rank r holds the block that rank r - i had for r.
TEST_P(BruckTest, AlltoallDeliversEveryBlock) {
  using Block = std::pair<int, int>;
  std::vector<std::vector<Block>> held(n());
  for (int r = 0; r < n(); ++r)
    for (int i = 0; i < n(); ++i) held[r].push_back({r, wrap(int64_t{r} + i, n())});
  for (int round = 0; round < Bruck(n(), 0).rounds(); ++round) {
    std::vector<std::vector<Block>> next = held;
    for (int r = 0; r < n(); ++r) {
      const Bruck b(n(), r);
      for (const BlockRun& run : b.alltoall_runs(round))
        for (int i = run.first; i < run.first + run.count; ++i) next[b.alltoall_to(round)][i] = held[r][i];
    }
    held = next;
  }
  for (int r = 0; r < n(); ++r)
    for (int i = 0; i < n(); ++i)
      EXPECT_EQ(held[r][i], Block(wrap(int64_t{r} - i, n()), r)) << "rank " << r << " index " << i;
}

// One size spelled out: n = 5, rank 1.
TEST(BruckExample, FiveRanks) {
  const Bruck b(5, 1);
  ASSERT_EQ(b.rounds(), 3);
  const std::vector<int> gather_to = {0, 4, 2}, gather_from = {2, 3, 0}, gather_blocks = {1, 2, 1};
  const std::vector<int> alltoall_to = {2, 3, 0}, alltoall_from = {0, 4, 2};
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(b.allgather_to(round), gather_to[round]);
    EXPECT_EQ(b.allgather_from(round), gather_from[round]);
    EXPECT_EQ(b.allgather_blocks(round), gather_blocks[round]);
    EXPECT_EQ(b.alltoall_to(round), alltoall_to[round]);
    EXPECT_EQ(b.alltoall_from(round), alltoall_from[round]);
  }
}

std::string size_name(const ::testing::TestParamInfo<int>& info) { return "n" + std::to_string(info.param); }

INSTANTIATE_TEST_SUITE_P(Sizes, BruckTest, ::testing::Range(1, kMaxRanks + 1), size_name);

}  // namespace
}  // namespace hcomm::algo
