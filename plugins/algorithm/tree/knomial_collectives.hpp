// The k-nomial tree algorithms, one per collective: a schedule builder for a
// given radix and the cost of that schedule. knomial.cpp registers them as
// "binomial" (radix 2) and "knomial" (the radix the cost model prefers).
#pragma once

#include "common/call.hpp"
#include "hcomm/plugin/algorithm.h"

namespace hcomm::algo {

// What a cost depends on, the same on every rank of a call (never the rank,
// nor in_place, which rooted collectives set on some ranks only).
struct CostInput {
  int nranks;
  double bytes;  // count * dtype_size: the message, or one rank's block
  hcomm_link_model_t link;
};

struct KnomialCollective {
  hcomm_coll_t coll;
  const char* name;  // for error messages
  void (*build)(const Call& call, ScheduleWriter& out, int radix);
  double (*cost)(const CostInput& in, int radix);
};

extern const KnomialCollective kKnomialBroadcast;
extern const KnomialCollective kKnomialReduce;
extern const KnomialCollective kKnomialGather;
extern const KnomialCollective kKnomialScatter;
extern const KnomialCollective kKnomialBarrier;

// Matches of the transfers toward the root and away from it.
constexpr uint32_t kUpMatch = 0;
constexpr uint32_t kDownMatch = 1;

}  // namespace hcomm::algo
