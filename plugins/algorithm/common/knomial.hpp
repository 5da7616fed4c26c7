// A k-nomial tree over n ranks rooted at `root` (radix k >= 2; k = 2 is the
// binomial tree), built on virtual ranks v = (rank - root) mod n written in
// base k. The parent of v is v with its lowest nonzero digit cleared; the
// children of v are v + j*k^p for every digit position p below that digit
// (every k^p < n at the root) and j = 1..k-1. So the subtree of v is the
// contiguous range of virtual ranks [v, v + k^p) cut at n, and no rank lies
// deeper than ceil(log_k n) edges from the root.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "patterns.hpp"

namespace hcomm::algo {

class KnomialTree {
 public:
  KnomialTree(int nranks, int radix, int root, int rank)
      : nranks_(nranks), radix_(radix), root_(root), vrank_(wrap(int64_t{rank} - root, nranks)) {
    // span_ = k^p for the lowest nonzero digit p of v; at the root, the
    // smallest power of k that is at least n.
    span_ = 1;
    while (is_root() ? span_ < nranks_ : (vrank_ / span_) % radix_ == 0) span_ *= radix_;
  }

  bool is_root() const { return vrank_ == 0; }
  // -1 at the root.
  int parent() const {
    if (is_root()) return -1;
    const int64_t digit = (vrank_ / span_) % radix_;
    return real(vrank_ - digit * span_);
  }
  // Highest digit position first (the deepest subtrees), nearest first within
  // a position; for k = 2 this is BinomialTree's farthest-first order.
  std::vector<int> children() const {
    std::vector<int> out;
    for (int64_t step = span_ / radix_; step > 0; step /= radix_)
      for (int64_t child = vrank_ + step; child < vrank_ + radix_ * step && child < nranks_; child += step)
        out.push_back(real(child));
    return out;
  }
  // This rank's place in the rotated order: its subtree is the virtual ranks
  // [vrank(), vrank() + subtree_size()).
  int vrank() const { return static_cast<int>(vrank_); }
  int subtree_size() const { return static_cast<int>(std::min<int64_t>(span_, nranks_ - vrank_)); }
  // The rank at virtual rank v.
  int real(int64_t vrank) const { return wrap(vrank + root_, nranks_); }

  // The most edges between the root and any rank: ceil(log_k n).
  static int height(int nranks, int radix) {
    int levels = 0;
    for (int64_t span = 1; span < nranks; span *= radix) ++levels;
    return levels;
  }

 private:
  int nranks_;
  int64_t radix_;
  int root_;
  int64_t vrank_;
  int64_t span_;
};

}  // namespace hcomm::algo
