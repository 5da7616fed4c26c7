// The algorithms this plugin registers: for each collective it serves, one
// descriptor per algorithm name, so that each build checks that it was given
// its collective.
#pragma once

#include <climits>
#include <cstdint>
#include <vector>

#include "hcomm/plugin/algorithm.h"

namespace hcomm::algo {

// "binomial" and "knomial": broadcast, reduce, gather, scatter, barrier.
const std::vector<hcomm_algorithm_desc_t>& knomial_algorithms();
// "double_binary_tree": allreduce, broadcast, reduce.
const std::vector<hcomm_algorithm_desc_t>& double_binary_tree_algorithms();

// Every tree algorithm serves any message size, any communicator size and
// host and CUDA memory (the schedules name buffers; copies and reductions go
// to the buffers' device).
inline hcomm_algorithm_desc_t tree_algorithm(const char* name, hcomm_coll_t coll,
                                             decltype(hcomm_algorithm_desc_t::cost) cost,
                                             decltype(hcomm_algorithm_desc_t::build) build) {
  return {.size = sizeof(hcomm_algorithm_desc_t),
          .name = name,
          .colls = 1u << coll,
          .mem_kinds = HCOMM_MEM_HOST | HCOMM_MEM_CUDA,
          .min_bytes = 0,
          .max_bytes = UINT64_MAX,
          .min_ranks = 1,
          .max_ranks = INT_MAX,
          .cost = cost,
          .build = build};
}

}  // namespace hcomm::algo
