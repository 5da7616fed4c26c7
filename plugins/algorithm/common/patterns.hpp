// Peer patterns: who talks to whom, and in which order, independent of what
// is sent. Algorithms compose them; each is a small value type answering in
// O(1) (children lists in O(log n)). Ranks are ints in [0, nranks); sums of a
// rank and a distance are formed in 64 bits so that they cannot overflow.
#pragma once

#include <cstdint>
#include <vector>

namespace hcomm::algo {

// The smallest k with 2^k >= n (0 for n <= 1).
constexpr int ceil_log2(int64_t n) {
  int k = 0;
  while ((int64_t{1} << k) < n) ++k;
  return k;
}

// a mod n in [0, n), for either sign of a.
constexpr int wrap(int64_t a, int n) {
  int64_t m = a % n;
  return static_cast<int>(m < 0 ? m + n : m);
}

// Ranks in a ring by rank order, with blocks that travel one hop per step: at
// step t a rank sends block (first - t) to next() and receives block
// (first - t - 1) from prev(), so the block it receives at step t is the one
// it sends at step t + 1, and what it sends is what next() receives. With
// first = rank, the first n - 1 steps carry every block through every rank to
// rank (block - 1) (the reduce-scatter of a ring allreduce); steps n - 1 to
// 2n - 3 carry each of those finished blocks once around (its allgather).
class Ring {
 public:
  Ring(int nranks, int rank) : nranks_(nranks), rank_(rank) {}

  int next() const { return wrap(int64_t{rank_} + 1, nranks_); }
  int prev() const { return wrap(int64_t{rank_} - 1, nranks_); }
  int sent_block(int64_t step, int first) const { return wrap(int64_t{first} - step, nranks_); }
  int received_block(int64_t step, int first) const { return wrap(int64_t{first} - step - 1, nranks_); }

 private:
  int nranks_;
  int rank_;
};

// A binomial tree over n ranks rooted at `root`, built on virtual ranks
// v = (rank - root) mod n. The parent of v is v with its lowest set bit
// cleared; the children of v are v + 2^k for every 2^k below that bit (every
// 2^k < n at the root). Children come farthest first (largest 2^k), the
// child whose subtree needs the most rounds first: with one send per round,
// every rank holds the data after ceil(log2 n) rounds, the least possible.
class BinomialTree {
 public:
  BinomialTree(int nranks, int root, int rank)
      : nranks_(nranks), root_(root), vrank_(wrap(int64_t{rank} - root, nranks)) {}

  bool is_root() const { return vrank_ == 0; }
  // -1 at the root.
  int parent() const { return is_root() ? -1 : real(vrank_ & (vrank_ - 1)); }
  // In send order, farthest first.
  std::vector<int> children() const {
    std::vector<int> out;
    for (int64_t mask = subtree_span() >> 1; mask > 0; mask >>= 1)
      if (vrank_ + mask < nranks_) out.push_back(real(vrank_ + mask));
    return out;
  }

 private:
  // The power of two that bounds this rank's subtree: its lowest set bit,
  // or the smallest power of two >= n at the root.
  int64_t subtree_span() const { return is_root() ? int64_t{1} << ceil_log2(nranks_) : vrank_ & -int64_t{vrank_}; }
  int real(int64_t vrank) const { return wrap(vrank + root_, nranks_); }

  int nranks_;
  int root_;
  int64_t vrank_;
};

// Dissemination (Hensgen, Finkel and Manber): in round k a rank signals
// rank + 2^k and hears from rank - 2^k; after ceil(log2 n) rounds every rank
// has heard, directly or through others, from every rank.
class Dissemination {
 public:
  Dissemination(int nranks, int rank) : nranks_(nranks), rank_(rank) {}

  int rounds() const { return ceil_log2(nranks_); }
  int send_peer(int round) const { return wrap(int64_t{rank_} + (int64_t{1} << round), nranks_); }
  int recv_peer(int round) const { return wrap(int64_t{rank_} - (int64_t{1} << round), nranks_); }

 private:
  int nranks_;
  int rank_;
};

// Recursive doubling without a fold, as prefix reductions use it (MPICH's
// scan): in round k rank r meets r XOR 2^k where that is a rank, the
// aligned group of 2^k ranks beside its own, so that after round k it has
// heard from its aligned group of 2^(k+1) ranks (cut at n). ceil(log2 n)
// rounds; a rank sits out those whose partner lies past the last rank.
class PrefixDoubling {
 public:
  PrefixDoubling(int nranks, int rank) : nranks_(nranks), rank_(rank) {}

  int rounds() const { return ceil_log2(nranks_); }
  // The partner in round k, or -1 where there is none.
  int partner(int round) const { return partner_of(rank_, round); }
  // Whether `rank` meets a partner in a round after `round`.
  bool meets_after(int rank, int round) const {
    for (int k = round + 1; k < rounds(); ++k)
      if (partner_of(rank, k) >= 0) return true;
    return false;
  }

 private:
  int partner_of(int rank, int round) const {
    const int64_t p = int64_t{rank} ^ (int64_t{1} << round);
    return p < nranks_ ? static_cast<int>(p) : -1;
  }

  int nranks_;
  int rank_;
};

}  // namespace hcomm::algo
