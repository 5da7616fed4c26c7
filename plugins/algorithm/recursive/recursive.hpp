// The algorithms this plugin registers: one descriptor per collective, so
// that each build checks that it was given its collective, and each has its
// own cost.
#pragma once

#include <cstdint>

#include "hcomm/plugin/algorithm.h"
#include "common/descriptor.hpp"

namespace hcomm::algo {

extern const hcomm_algorithm_desc_t kRecursiveDoublingAllreduce;
extern const hcomm_algorithm_desc_t kRecursiveDoublingAllgather;
extern const hcomm_algorithm_desc_t kHalvingDoublingAllreduce;
extern const hcomm_algorithm_desc_t kHalvingDoublingReduceScatter;
extern const hcomm_algorithm_desc_t kHalvingDoublingReduceScatterV;
extern const hcomm_algorithm_desc_t kDisseminationBarrier;
extern const hcomm_algorithm_desc_t kRecursiveDoublingScan;
extern const hcomm_algorithm_desc_t kRecursiveDoublingExscan;


}  // namespace hcomm::algo
