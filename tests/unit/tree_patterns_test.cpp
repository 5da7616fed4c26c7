// The tree patterns of the algorithm plugins (k-nomial tree, double binary
// tree), for every communicator size 1..33 and every root: each tree spans
// the ranks (parents and children agree, every rank is reached exactly
// once), depths stay within their bounds, and the layouts that algorithms
// rely on (contiguous subtrees, NCCL's trees) hold.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <queue>
#include <vector>

#include "plugins/algorithm/common/double_binary_tree.hpp"
#include "plugins/algorithm/common/knomial.hpp"
#include "plugins/algorithm/common/patterns.hpp"

namespace hcomm::algo {
namespace {

constexpr int kMaxRanks = 33;

using Parent = std::function<int(int rank)>;
using Children = std::function<std::vector<int>(int rank)>;

// Walks a tree from `top`, checking that every rank is reached exactly once
// and that each child names its parent; returns each rank's depth.
std::vector<int> walk(int n, int top, const Parent& parent, const Children& children) {
  std::vector<int> depth(n, -1);
  EXPECT_EQ(parent(top), -1) << "the top " << top << " has a parent";
  depth[top] = 0;
  std::queue<int> frontier;
  frontier.push(top);
  int reached = 1;
  while (!frontier.empty()) {
    const int rank = frontier.front();
    frontier.pop();
    for (int child : children(rank)) {
      EXPECT_TRUE(child >= 0 && child < n) << "rank " << rank << " has child " << child;
      if (child < 0 || child >= n) continue;
      EXPECT_EQ(parent(child), rank) << "child " << child << " of rank " << rank;
      EXPECT_EQ(depth[child], -1) << "rank " << child << " reached twice";
      if (depth[child] != -1) continue;
      depth[child] = depth[rank] + 1;
      ++reached;
      frontier.push(child);
    }
  }
  EXPECT_EQ(reached, n) << "ranks reached from " << top;
  return depth;
}

int max_of(const std::vector<int>& v) { return *std::max_element(v.begin(), v.end()); }

// ceil(log_k n), computed independently of KnomialTree::height.
int ceil_log(int n, int k) {
  int levels = 0;
  long long power = 1;
  while (power < n) power *= k, ++levels;
  return levels;
}

class TreePatterns : public ::testing::TestWithParam<int> {
 protected:
  int n() const { return GetParam(); }
};

// ---------------------------------------------------------------------------
// K-nomial tree.

constexpr int kRadices[] = {2, 3, 4, 5, 8, 40};

// A rank lies as deep as its virtual rank has nonzero digits in base k.
TEST_P(TreePatterns, KnomialTreeSpansTheRanksForEveryRootAndRadix) {
  for (int k : kRadices)
    for (int root = 0; root < n(); ++root) {
      SCOPED_TRACE(testing::Message() << "radix " << k << " root " << root);
      const std::vector<int> depth = walk(
          n(), root, [&](int r) { return KnomialTree(n(), k, root, r).parent(); },
          [&](int r) { return KnomialTree(n(), k, root, r).children(); });
      for (int rank = 0; rank < n(); ++rank) {
        EXPECT_EQ(KnomialTree(n(), k, root, rank).is_root(), rank == root);
        int digits = 0;
        for (int v = (rank - root + n()) % n(); v > 0; v /= k) digits += v % k != 0;
        EXPECT_EQ(depth[rank], digits) << "rank " << rank;
      }
      EXPECT_LE(max_of(depth), ceil_log(n(), k));
      EXPECT_EQ(KnomialTree::height(n(), k), ceil_log(n(), k));
    }
}

// A subtree is the virtual range [vrank, vrank + size): what gather and
// scatter forward in one message per edge.
TEST_P(TreePatterns, KnomialSubtreesAreContiguousVirtualRanges) {
  for (int k : kRadices)
    for (int root = 0; root < n(); ++root) {
      SCOPED_TRACE(testing::Message() << "radix " << k << " root " << root);
      for (int rank = 0; rank < n(); ++rank) {
        const KnomialTree tree(n(), k, root, rank);
        EXPECT_EQ(tree.vrank(), (rank - root + n()) % n());
        EXPECT_EQ(tree.real(tree.vrank()), rank);
        std::vector<int> members;  // virtual ranks of the subtree
        std::function<void(int)> collect = [&](int r) {
          members.push_back(KnomialTree(n(), k, root, r).vrank());
          for (int child : KnomialTree(n(), k, root, r).children()) collect(child);
        };
        collect(rank);
        std::sort(members.begin(), members.end());
        ASSERT_EQ(static_cast<int>(members.size()), tree.subtree_size()) << "rank " << rank;
        for (size_t i = 0; i < members.size(); ++i)
          EXPECT_EQ(members[i], tree.vrank() + static_cast<int>(i)) << "rank " << rank;
        // Children's ranges tile the subtree after the rank's own block.
        std::vector<std::pair<int, int>> ranges;
        for (int child : tree.children()) {
          const KnomialTree sub(n(), k, root, child);
          ranges.emplace_back(sub.vrank(), sub.subtree_size());
        }
        std::sort(ranges.begin(), ranges.end());
        int next = tree.vrank() + 1;
        for (const auto& [first, size] : ranges) {
          EXPECT_EQ(first, next) << "rank " << rank;
          next = first + size;
        }
        EXPECT_EQ(next, tree.vrank() + tree.subtree_size()) << "rank " << rank;
      }
    }
}

// Children come by digit position, the highest (deepest subtrees) first,
// nearest first within a position; at most k-1 per position.
TEST_P(TreePatterns, KnomialChildrenComeByLevelDeepestFirst) {
  for (int k : kRadices)
    for (int root = 0; root < n(); ++root)
      for (int rank = 0; rank < n(); ++rank) {
        const KnomialTree tree(n(), k, root, rank);
        const std::vector<int> children = tree.children();
        auto level = [&](int child) {
          int d = (child - rank + n()) % n(), p = 0;
          while (d % k == 0) d /= k, ++p;
          return p;
        };
        for (size_t i = 1; i < children.size(); ++i) {
          EXPECT_GE(level(children[i - 1]), level(children[i]))
              << "radix " << k << " root " << root << " rank " << rank;
          if (level(children[i - 1]) == level(children[i])) {
            EXPECT_LT((children[i - 1] - rank + n()) % n(), (children[i] - rank + n()) % n());
          }
        }
        EXPECT_LE(static_cast<int>(children.size()), (k - 1) * ceil_log(n(), k));
      }
}

TEST_P(TreePatterns, KnomialWithRadixTwoIsTheBinomialTree) {
  for (int root = 0; root < n(); ++root)
    for (int rank = 0; rank < n(); ++rank) {
      const KnomialTree knomial(n(), 2, root, rank);
      const BinomialTree binomial(n(), root, rank);
      EXPECT_EQ(knomial.parent(), binomial.parent()) << "root " << root << " rank " << rank;
      EXPECT_EQ(knomial.children(), binomial.children()) << "root " << root << " rank " << rank;
    }
}

TEST(KnomialTree, MatchesAWorkedExample) {
  // n = 10, radix 3, root 4: virtual ranks in base 3 are 0, 1, 2, 10, 11,
  // 12, 20, 21, 22, 100.
  auto vchildren = [](int v) {
    std::vector<int> out;
    for (int r : KnomialTree(10, 3, 4, (v + 4) % 10).children()) out.push_back((r - 4 + 10) % 10);
    return out;
  };
  EXPECT_EQ(vchildren(0), (std::vector<int>{9, 3, 6, 1, 2}));
  EXPECT_EQ(vchildren(3), (std::vector<int>{4, 5}));
  EXPECT_EQ(vchildren(6), (std::vector<int>{7, 8}));
  EXPECT_EQ(vchildren(9), std::vector<int>{});
  EXPECT_EQ(KnomialTree(10, 3, 4, (8 + 4) % 10).parent(), (6 + 4) % 10);
  EXPECT_EQ(KnomialTree(10, 3, 4, (9 + 4) % 10).parent(), 4);
  EXPECT_EQ(KnomialTree(10, 3, 4, 4).subtree_size(), 10);
  EXPECT_EQ(KnomialTree(10, 3, 4, (3 + 4) % 10).subtree_size(), 3);
  EXPECT_EQ(KnomialTree(10, 3, 4, (9 + 4) % 10).subtree_size(), 1);
}

// ---------------------------------------------------------------------------
// Double binary tree.

int interior_trees(const DoubleBinaryTree& t) {
  return static_cast<int>(!t.children(0).empty()) + static_cast<int>(!t.children(1).empty());
}

TEST_P(TreePatterns, DoubleBinaryTreesSpanTheRanks) {
  for (int tree : {0, 1}) {
    SCOPED_TRACE(testing::Message() << "tree " << tree);
    const int top = DoubleBinaryTree(n(), 0).top(tree);
    EXPECT_EQ(top, tree == 0 || n() == 1 ? 0 : n() % 2 == 0 ? n() - 1 : 1);
    for (int rank = 0; rank < n(); ++rank) {
      EXPECT_EQ(DoubleBinaryTree(n(), rank).top(tree), top);
      EXPECT_LE(DoubleBinaryTree(n(), rank).children(tree).size(), 2u) << "rank " << rank;
    }
    EXPECT_EQ(DoubleBinaryTree(n(), top).children(tree).size(), n() > 1 ? 1u : 0u) << "the top has one child";
    const std::vector<int> depth = walk(
        n(), top, [&](int r) { return DoubleBinaryTree(n(), r).parent(tree); },
        [&](int r) { return DoubleBinaryTree(n(), r).children(tree); });
    EXPECT_EQ(max_of(depth), ceil_log(n(), 2));
  }
}

// What makes the pair worth having: a rank forwards data (is interior) in
// one tree and is a leaf of the other, so each half crosses each rank once.
// NCCL's shift for odd n leaves one exception, rank 0, interior in both with
// one child in each. No rank has more than two children in all.
TEST_P(TreePatterns, DoubleBinaryTreeRanksAreInteriorInAtMostOneTree) {
  for (int rank = 0; rank < n(); ++rank) {
    const DoubleBinaryTree t(n(), rank);
    EXPECT_LE(interior_trees(t), n() % 2 == 1 && rank == 0 ? 2 : 1) << "rank " << rank;
    EXPECT_LE(t.children(0).size() + t.children(1).size(), 2u) << "rank " << rank;
  }
}

// NCCL's own pictures (src/graph/trees.cc): a mirror for 12 ranks, a shift for 13.
TEST(DoubleBinaryTree, MatchesNcclsTrees) {
  using V = std::vector<int>;
  auto kids = [](int n, int rank, int tree) { return DoubleBinaryTree(n, rank).children(tree); };
  // Tree 0 over 12: 0-8, 8-(4,10), 4-(2,6), 10-(9,11), 2-(1,3), 6-(5,7).
  EXPECT_EQ(kids(12, 0, 0), V{8});
  EXPECT_EQ(kids(12, 8, 0), (V{4, 10}));
  EXPECT_EQ(kids(12, 4, 0), (V{2, 6}));
  EXPECT_EQ(kids(12, 10, 0), (V{9, 11}));
  EXPECT_EQ(kids(12, 2, 0), (V{1, 3}));
  EXPECT_EQ(kids(12, 6, 0), (V{5, 7}));
  EXPECT_EQ(kids(12, 11, 0), V{});
  // Tree 1 over 12, the mirror: 11-3, 3-(7,1), 7-(9,5), 1-(2,0), 9-(10,8), 5-(6,4).
  EXPECT_EQ(kids(12, 11, 1), V{3});
  EXPECT_EQ(kids(12, 3, 1), (V{7, 1}));
  EXPECT_EQ(kids(12, 7, 1), (V{9, 5}));
  EXPECT_EQ(kids(12, 1, 1), (V{2, 0}));
  EXPECT_EQ(kids(12, 9, 1), (V{10, 8}));
  EXPECT_EQ(kids(12, 5, 1), (V{6, 4}));
  EXPECT_EQ(kids(12, 0, 1), V{});
  // Tree 0 over 13 ends in 12-(10), 10-(9,11); tree 1, the shift: 1-9,
  // 9-(5,0), 5-(3,7), 0-(11), 3-(2,4), 7-(6,8), 11-(10,12).
  EXPECT_EQ(kids(13, 12, 0), V{10});
  EXPECT_EQ(kids(13, 8, 0), (V{4, 12}));
  EXPECT_EQ(kids(13, 1, 1), V{9});
  EXPECT_EQ(kids(13, 9, 1), (V{5, 0}));
  EXPECT_EQ(kids(13, 5, 1), (V{3, 7}));
  EXPECT_EQ(kids(13, 0, 1), V{11});
  EXPECT_EQ(kids(13, 11, 1), (V{10, 12}));
  EXPECT_EQ(DoubleBinaryTree(13, 12).parent(1), 11);
  EXPECT_EQ(DoubleBinaryTree(13, 9).parent(1), 1);
  EXPECT_EQ(DoubleBinaryTree(13, 1).parent(1), -1);
}

TEST_P(TreePatterns, RootedDoubleBinaryTreesHangBelowTheRoot) {
  for (int root = 0; root < n(); ++root) {
    SCOPED_TRACE(testing::Message() << "root " << root);
    const DoubleBinaryTree at_root = DoubleBinaryTree::rooted(n(), root, root);
    for (int tree : {0, 1}) {
      SCOPED_TRACE(testing::Message() << "tree " << tree);
      EXPECT_EQ(at_root.top(tree), root);
      EXPECT_EQ(at_root.children(tree).size(), n() > 1 ? 1u : 0u);
      const std::vector<int> depth = walk(
          n(), root, [&](int r) { return DoubleBinaryTree::rooted(n(), root, r).parent(tree); },
          [&](int r) { return DoubleBinaryTree::rooted(n(), root, r).children(tree); });
      EXPECT_EQ(max_of(depth), n() > 1 ? 1 + ceil_log(n() - 1, 2) : 0);
    }
    if (n() > 2) {
      EXPECT_NE(at_root.children(0), at_root.children(1)) << "the halves leave the root to different ranks";
    }
    // The trees span the n - 1 other ranks: with n - 1 odd the first of
    // them is interior in both, as rank 0 above.
    for (int rank = 0; rank < n(); ++rank) {
      if (rank == root) continue;
      const DoubleBinaryTree t = DoubleBinaryTree::rooted(n(), root, rank);
      EXPECT_LE(interior_trees(t), n() % 2 == 0 && rank == (root + 1) % n() ? 2 : 1) << "rank " << rank;
      EXPECT_LE(t.children(0).size() + t.children(1).size(), 2u) << "rank " << rank;
    }
  }
}

// The rooted form is NCCL's pair over the other ranks, renumbered from root + 1.
TEST_P(TreePatterns, RootedDoubleBinaryTreeIsNcclsOverTheOtherRanks) {
  if (n() < 2) return;
  const int m = n() - 1;
  for (int root = 0; root < n(); ++root)
    for (int index = 0; index < m; ++index) {
      const int rank = (root + 1 + index) % n();
      auto renumber = [&](std::vector<int> ranks) {
        for (int& r : ranks) r = (root + 1 + r) % n();
        return ranks;
      };
      for (int tree : {0, 1}) {
        const DoubleBinaryTree plain(m, index);
        EXPECT_EQ(DoubleBinaryTree::rooted(n(), root, rank).children(tree), renumber(plain.children(tree)))
            << "root " << root << " rank " << rank << " tree " << tree;
        const int up = plain.parent(tree);
        EXPECT_EQ(DoubleBinaryTree::rooted(n(), root, rank).parent(tree), up < 0 ? root : (root + 1 + up) % n());
      }
    }
}

std::string rank_count_name(const ::testing::TestParamInfo<int>& param) { return "n" + std::to_string(param.param); }

INSTANTIATE_TEST_SUITE_P(Ranks, TreePatterns, ::testing::Range(1, kMaxRanks + 1), rank_count_name);

}  // namespace
}  // namespace hcomm::algo
