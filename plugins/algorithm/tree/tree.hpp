// The algorithms this plugin registers: for each collective it serves, one
// descriptor per algorithm name, so that each build checks that it was given
// its collective.
#pragma once

#include <cstdint>
#include <vector>

#include "hcomm/plugin/algorithm.h"
#include "common/descriptor.hpp"

namespace hcomm::algo {

// "binomial" and "knomial": broadcast, reduce, gather, scatter, barrier, and
// allreduce for user ops that do not commute.
const std::vector<hcomm_algorithm_desc_t>& knomial_algorithms();
// "double_binary_tree": allreduce, broadcast, reduce.
const std::vector<hcomm_algorithm_desc_t>& double_binary_tree_algorithms();


}  // namespace hcomm::algo
