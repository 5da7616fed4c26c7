// Recursive halving and doubling (Thakur, Rabenseifner and Gropp, 2005):
// ranks pair up across the dimensions of a hypercube of p ranks, p the
// largest power of two <= n. Doubling round k pairs virtual ranks 2^k apart
// (groups of 2^k merge into groups of 2^(k+1)); halving round k pairs them
// p / 2^(k+1) apart (a segment of 2^(log2 p - k) splits in two).
//
// When n is not a power of two the first 2(n - p) ranks fold in pairs: even
// rank 2i hands its data to 2i + 1 before the exchange and gets the result
// back after it; 2i + 1 takes part for both. The ranks taking part get
// virtual ranks 0..p-1 in rank order, so a virtual rank stands for the
// consecutive ranks first_rank(v)..first_rank(v + 1) - 1, and an aligned group
// of virtual ranks stands for a consecutive range of ranks.
#pragma once

#include <cstdint>

#include "patterns.hpp"

namespace hcomm::algo {

class FoldedHypercube {
 public:
  FoldedHypercube(int nranks, int rank)
      : rank_(rank),
        rounds_(ceil_log2(int64_t{nranks} + 1) - 1),
        extras_(nranks - (1 << rounds_)),
        vrank_(rank < 2 * extras_ ? (rank % 2 ? rank / 2 : -1) : rank - extras_) {}

  // p, the number of virtual ranks, and log2 p rounds per phase.
  int size() const { return 1 << rounds_; }
  int rounds() const { return rounds_; }

  // This rank hands its data to fold_partner() and takes no other part.
  bool folded_out() const { return vrank_ < 0; }
  // This rank takes part for itself and fold_partner().
  bool folded_in() const { return vrank_ >= 0 && rank_ < 2 * extras_; }
  // The other rank of this rank's pair, or -1 when it is in none.
  int fold_partner() const { return rank_ < 2 * extras_ ? rank_ ^ 1 : -1; }

  // -1 when folded out.
  int vrank() const { return vrank_; }
  // The rank that takes part as virtual rank v.
  int rank_of(int64_t v) const { return static_cast<int>(v < extras_ ? 2 * v + 1 : v + extras_); }
  // The lowest rank whose data virtual rank v stands for; first_rank(size()) is n.
  int first_rank(int64_t v) const { return static_cast<int>(v < extras_ ? 2 * v : v + extras_); }

  static int64_t doubling_distance(int round) { return int64_t{1} << round; }
  int64_t halving_distance(int round) const { return int64_t{1} << (rounds_ - 1 - round); }
  // The partner at `distance` (a power of two below size()).
  int peer(int64_t distance) const { return rank_of(vrank_ ^ distance); }
  // The first virtual rank of the aligned group of `span` (a power of two)
  // that holds this rank's virtual rank; the partner's group at distance
  // `span` starts at group(span) ^ span.
  int64_t group(int64_t span) const { return vrank_ & ~(span - 1); }
  // Whether this rank's group is the lower of the two that merge at distance d.
  bool lower(int64_t distance) const { return (vrank_ & distance) == 0; }

 private:
  int rank_;
  int rounds_;
  int extras_;  // n - p: the pairs that fold
  int vrank_;
};

}  // namespace hcomm::algo
