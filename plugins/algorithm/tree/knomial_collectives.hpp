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
  hcomm_op_t op;  // reductions
};

struct KnomialCollective {
  hcomm_coll_t coll;
  const char* name;  // for error messages
  void (*build)(const Call& call, ScheduleWriter& out, int radix);
  double (*cost)(const CostInput& in, int radix);
  // Its reductions keep rank order for HCOMM_OP_USER_ORDERED (ordered_colls).
  bool keeps_rank_order = false;
};

extern const KnomialCollective kKnomialBroadcast;
extern const KnomialCollective kKnomialReduce;
extern const KnomialCollective kKnomialGather;
extern const KnomialCollective kKnomialScatter;
extern const KnomialCollective kKnomialBarrier;
// For HCOMM_OP_USER_ORDERED only: a reduce to rank 0, then a broadcast.
extern const KnomialCollective kKnomialOrderedAllreduce;

// Matches of the transfers toward the root and away from it.
constexpr uint32_t kUpMatch = 0;
constexpr uint32_t kDownMatch = 1;

// Reduces every rank's SEND up the k-nomial tree rooted at rank 0, in rank
// order: a rank's subtree is the ranks [r, r + span), and its children, each
// the next range, are combined in ascending order, so that every partial
// result is its ranks' inputs in rank order. Rank 0's result lands in
// `top_acc`, the others' partial results in `acc`. Returns flow_up's last step.
int32_t reduce_in_rank_order(const Call& call, ScheduleWriter& out, int radix, uint32_t nchunks, hcomm_bufref_t top_acc,
                             hcomm_bufref_t acc);

}  // namespace hcomm::algo
