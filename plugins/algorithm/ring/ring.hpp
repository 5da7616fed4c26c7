// The algorithms this plugin registers, all named "ring": one descriptor per
// collective, so that each build checks that it was given its collective.
#pragma once

#include <cstdint>

#include "hcomm/plugin/algorithm.h"
#include "common/descriptor.hpp"

namespace hcomm::algo {

extern const hcomm_algorithm_desc_t kRingAllreduce;
extern const hcomm_algorithm_desc_t kRingAllgather;
extern const hcomm_algorithm_desc_t kRingAllgatherv;
extern const hcomm_algorithm_desc_t kRingReduceScatter;
extern const hcomm_algorithm_desc_t kRingReduceScatterV;
extern const hcomm_algorithm_desc_t kRingBroadcast;
extern const hcomm_algorithm_desc_t kRingReduce;
extern const hcomm_algorithm_desc_t kRingScan;
extern const hcomm_algorithm_desc_t kRingExscan;

// Ring transfers are matched by their step number, which must stay below
// 2^24: with n - 1 steps per pass around the ring, one pass serves up to 2^24
// ranks and the allreduce's two passes half as many.
constexpr int kMaxRingPassRanks = 1 << 24;


}  // namespace hcomm::algo
