// What the files of the basic algorithm plugin share: the services the core
// handed to init, and the algorithms the plugin registers.
#pragma once

#include "hcomm/plugin/algorithm.h"
#include "hcomm/plugin/util.hpp"

namespace hcomm::basic {

hcomm::plugin::Services& services();

extern const hcomm_algorithm_desc_t kRingAllreduce;
extern const hcomm_algorithm_desc_t kBinomialBroadcast;
extern const hcomm_algorithm_desc_t kDisseminationBarrier;

}  // namespace hcomm::basic
