// Recursive doubling allreduce over a group of ranks: the schedule of the
// recursive plugin's allreduce.
#pragma once

#include <cstdint>
#include <vector>

#include "common/call.hpp"
#include "common/patterns.hpp"
#include "common/schedule_writer.hpp"

namespace hcomm::algo {

// Ranks in the order a pattern numbers them; `me` is this rank's position.
struct Group {
  std::vector<int> ranks;
  int me;

  // Every rank of the call, in rank order.
  static Group all(const Call& call);
  int size() const { return static_cast<int>(ranks.size()); }
  int rank_at(int64_t position) const { return ranks[static_cast<size_t>(wrap(position, size()))]; }
};

// Where a value lies at this rank: the reference, and the step that wrote
// it there (-1: it was there when the call began).
struct Placed {
  int32_t step = -1;
  hcomm_bufref_t at{};
};

// Round k is matched by first_round + k; the fold and its return by their own.
struct DoublingMatches {
  uint32_t first_round;
  uint32_t fold;
  uint32_t unfold;
};

// log2 rounds in which partners exchange the whole message (call.bytes):
// every member ends with the reduction of all members' `input` in `acc`,
// each round's partner value received into HCOMM_BUF_SCRATCH (requested).
// Both partners combine the lower's value with the higher's, so all end
// with the same bits. A group whose size is not a power of two folds its
// first pairs in first and out last (recursive_halving.hpp). `final` marks
// the last reduction. Returns where the result lies.
Placed add_doubling_allreduce(const Call& call, const Group& group, DoublingMatches matches, Placed input,
                              hcomm_bufref_t acc, bool final, ScheduleWriter& out);

}  // namespace hcomm::algo
