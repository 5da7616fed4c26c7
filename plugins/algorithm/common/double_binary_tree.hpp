// NCCL's double binary tree: two binary trees over the same ranks, each of
// which carries half of the data. Tree 0 is NCCL's btree: position 0 is the
// root, with one child; below it, position p with lowest set bit b has the
// children p - b/2 and p + b/2 (or p + b/4, p + b/8, ... where that is out of
// range), so odd positions are leaves and the depth is ceil(log2 m) over m
// positions. Tree 1 maps rank w to position m-1-w when m is even (a mirror:
// the odd ranks are its interior nodes, the even ones tree 0's) and to w - 1
// mod m when m is odd (a shift: then rank 0 is interior in both trees, with
// one child in each, every other rank in at most one). So no rank has more
// than two children in all, and with each half flowing through its tree,
// every rank sends and receives about the whole message once per direction.
//
// Two forms: NCCL's over all n ranks (allreduce; tree roots 0 and n-1, or 0
// and 1 for odd n), and a rooted one for broadcast and reduce, where the
// call's root is the parent of both trees' roots and the trees span the
// other n-1 ranks, taken in order from root + 1.
#pragma once

#include <cstdint>
#include <vector>

#include "patterns.hpp"

namespace hcomm::algo {

class DoubleBinaryTree {
 public:
  DoubleBinaryTree(int nranks, int rank) : DoubleBinaryTree(nranks, nranks, 0, -1, rank) {}
  static DoubleBinaryTree rooted(int nranks, int root, int rank) {
    return DoubleBinaryTree(nranks, nranks - 1, wrap(int64_t{root} + 1, nranks), root, rank);
  }

  // -1 at the top of the tree.
  int parent(int tree) const {
    if (is_top()) return -1;
    const int64_t up = btree(position(tree, index_)).parent;
    return up < 0 ? top_ : real(tree, up);
  }
  // At most two; the rooted form's top has one per tree (none for n = 1).
  std::vector<int> children(int tree) const {
    if (is_top()) return positions_ > 0 ? std::vector<int>{real(tree, 0)} : std::vector<int>{};
    std::vector<int> out;
    for (int64_t child : btree(position(tree, index_)).children)
      if (child >= 0) out.push_back(real(tree, child));
    return out;
  }
  // The rank without a parent in `tree`.
  int top(int tree) const { return top_ >= 0 ? top_ : real(tree, 0); }

 private:
  DoubleBinaryTree(int nranks, int positions, int first, int top, int rank)
      : nranks_(nranks),
        positions_(positions),
        first_(first),
        top_(top),
        index_(rank == top ? -1 : wrap(int64_t{rank} - first, nranks)) {}

  struct Links {
    int64_t parent;
    int64_t children[2];
  };

  bool is_top() const { return index_ < 0; }

  // NCCL's ncclGetBtree over positions_ positions, at position p.
  Links btree(int64_t p) const {
    const int64_t m = positions_;
    int64_t bit = 1;
    while (bit < m && !(bit & p)) bit <<= 1;
    if (p == 0) return {-1, {m > 1 ? bit >> 1 : -1, -1}};
    int64_t up = (p ^ bit) | (bit << 1);
    if (up >= m) up = p ^ bit;
    const int64_t low = bit >> 1;
    int64_t right = -1;
    for (int64_t step = low; step > 0 && right < 0; step >>= 1)
      if (p + step < m) right = p + step;
    return {up, {low > 0 ? p - low : -1, right}};
  }

  // Tree 1's mirror (even m) or shift (odd m) of an index; index_of undoes it.
  int64_t position(int tree, int64_t index) const {
    if (tree == 0) return index;
    return positions_ % 2 == 0 ? positions_ - 1 - index : wrap(index - 1, static_cast<int>(positions_));
  }
  int64_t index_of(int tree, int64_t position) const {
    if (tree == 0) return position;
    return positions_ % 2 == 0 ? positions_ - 1 - position : wrap(position + 1, static_cast<int>(positions_));
  }
  int real(int tree, int64_t position) const { return wrap(first_ + index_of(tree, position), nranks_); }

  int nranks_;
  int64_t positions_;  // ranks the trees span: n, or n - 1 under a root
  int first_;          // the rank at index 0
  int top_;            // the rooted form's root, else -1
  int64_t index_;      // this rank's index among the spanned ranks; -1 at the root
};

}  // namespace hcomm::algo
