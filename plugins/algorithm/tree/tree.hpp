// The algorithms this plugin registers.
#pragma once

#include "hcomm/plugin/algorithm.h"

namespace hcomm::algo {

extern const hcomm_algorithm_desc_t kBinomialBroadcast;

}  // namespace hcomm::algo
