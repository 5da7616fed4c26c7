// The algorithms this plugin registers: one descriptor per collective, so
// that each build checks that it was given its collective, and each has its
// own cost.
#pragma once

#include <cstdint>

#include "hcomm/plugin/algorithm.h"
#include "common/descriptor.hpp"

namespace hcomm::algo {

extern const hcomm_algorithm_desc_t kBruckAllgather;
extern const hcomm_algorithm_desc_t kBruckAlltoall;
extern const hcomm_algorithm_desc_t kPairwiseAlltoall;
extern const hcomm_algorithm_desc_t kPairwiseAlltoallv;
extern const hcomm_algorithm_desc_t kLinearGather;
extern const hcomm_algorithm_desc_t kLinearScatter;
extern const hcomm_algorithm_desc_t kLinearAlltoall;
extern const hcomm_algorithm_desc_t kLinearAlltoallv;
// For user ops that do not commute only (HCOMM_OP_USER_ORDERED).
extern const hcomm_algorithm_desc_t kLinearReduceScatter;
extern const hcomm_algorithm_desc_t kLinearReduceScatterV;

}  // namespace hcomm::algo
