// The descriptor most algorithms share: any message size, host and CUDA
// memory (schedules name buffers; copies and reductions go to the buffers'
// device), communicators of 1 to max_ranks ranks.
#pragma once

#include <climits>

#include "hcomm/plugin/algorithm.h"

namespace hcomm::algo {

constexpr hcomm_algorithm_desc_t any_size_algorithm(const char* name, hcomm_coll_t coll,
                                                    decltype(hcomm_algorithm_desc_t::cost) cost,
                                                    decltype(hcomm_algorithm_desc_t::build) build,
                                                    int max_ranks = INT_MAX) {
  return {.size = sizeof(hcomm_algorithm_desc_t),
          .name = name,
          .colls = 1u << coll,
          .mem_kinds = HCOMM_MEM_HOST | HCOMM_MEM_CUDA,
          .min_bytes = 0,
          .max_bytes = UINT64_MAX,
          .min_ranks = 1,
          .max_ranks = max_ranks,
          .cost = cost,
          .build = build};
}

// `d` combining its calls of HCOMM_OP_USER_ORDERED in rank order, for every
// collective it serves.
constexpr hcomm_algorithm_desc_t keeping_rank_order(hcomm_algorithm_desc_t d) {
  d.ordered_colls = d.colls;
  return d;
}

}  // namespace hcomm::algo
