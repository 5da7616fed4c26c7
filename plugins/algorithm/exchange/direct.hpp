// Alltoall(v) by direct transfers, shared by pairwise and linear: for
// k = 1..n-1 the block for rank + k goes straight to it and the block from
// rank - k straight into RECV; the own block is copied. In place, receives
// would overwrite blocks not yet sent, so the outgoing blocks are first
// copied to scratch and sent from there.
#pragma once

#include <cstdint>

#include "common/call.hpp"
#include "hcomm/plugin/algorithm.h"

namespace hcomm::algo {

enum class Pacing {
  kRounds,    // round k's transfers wait for round k - 1's: one peer at a time each way
  kAllAtOnce  // every transfer may start at once
};

void build_direct_alltoall(const Call& call, ScheduleWriter& out, Pacing pacing);

// The cost of a direct exchange whose n-1 transfers each way take `latency`
// in all: the larger of the bytes this rank sends and receives, and the copy
// of its own block (of all blocks, to scratch, when in place).
double direct_alltoall_cost(const hcomm_coll_args_t& args, const hcomm_comm_view_t& comm, double latency);

// Throws HCOMM_ERR_INVALID_ARGUMENT, naming the field, unless an alltoallv
// came with its receive layout (and its send layout, unless in place).
void check_alltoallv_layout(const Call& call);

}  // namespace hcomm::algo
