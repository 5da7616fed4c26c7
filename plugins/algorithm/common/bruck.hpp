// Bruck's rounds (Bruck, Ho, Kipnis, Upfal and Weathersby, 1997): ceil(log2 n)
// rounds at distances 2^k, for any n. Blocks are indexed relative to the
// rank: index i is the block of rank + i (allgather) or for rank + i
// (alltoall, after the initial rotation).
//
// Allgather: a rank starts with its own block at index 0; in round k it sends
// its first allgather_blocks(k) blocks to rank - 2^k and receives as many from
// rank + 2^k at index 2^k, so after round k it holds indices 0..2^(k+1)-1.
//
// Alltoall: a rank starts with the block for rank + i at index i; in round k
// it sends every block whose index has bit k set to rank + 2^k and receives
// the same indices from rank - 2^k in their place. The block at index i moves
// by the bits of i, so it ends at rank + i, and index i then holds the block
// that rank - i had for this rank.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "patterns.hpp"

namespace hcomm::algo {

// Consecutive block indices [first, first + count).
struct BlockRun {
  int first;
  int count;
};

class Bruck {
 public:
  Bruck(int nranks, int rank) : nranks_(nranks), rank_(rank) {}

  int rounds() const { return ceil_log2(nranks_); }
  static int64_t distance(int round) { return int64_t{1} << round; }

  int allgather_to(int round) const { return wrap(int64_t{rank_} - distance(round), nranks_); }
  int allgather_from(int round) const { return wrap(int64_t{rank_} + distance(round), nranks_); }
  // Sent from index 0, received at index distance(round).
  int allgather_blocks(int round) const {
    return static_cast<int>(std::min(distance(round), int64_t{nranks_} - distance(round)));
  }

  int alltoall_to(int round) const { return wrap(int64_t{rank_} + distance(round), nranks_); }
  int alltoall_from(int round) const { return wrap(int64_t{rank_} - distance(round), nranks_); }
  // The indices with bit `round` set, as runs in increasing order.
  std::vector<BlockRun> alltoall_runs(int round) const {
    std::vector<BlockRun> runs;
    const int64_t d = distance(round);
    for (int64_t first = d; first < nranks_; first += 2 * d)
      runs.push_back({static_cast<int>(first), static_cast<int>(std::min(d, nranks_ - first))});
    return runs;
  }

 private:
  int nranks_;
  int rank_;
};

}  // namespace hcomm::algo
