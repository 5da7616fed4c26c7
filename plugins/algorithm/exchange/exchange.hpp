// The algorithms this plugin registers: one descriptor per collective, so
// that each build checks that it was given its collective, and each has its
// own cost.
#pragma once

#include <climits>
#include <cstdint>

#include "hcomm/plugin/algorithm.h"

namespace hcomm::algo {

extern const hcomm_algorithm_desc_t kBruckAllgather;
extern const hcomm_algorithm_desc_t kBruckAlltoall;
extern const hcomm_algorithm_desc_t kPairwiseAlltoall;
extern const hcomm_algorithm_desc_t kPairwiseAlltoallv;
extern const hcomm_algorithm_desc_t kLinearGather;
extern const hcomm_algorithm_desc_t kLinearScatter;
extern const hcomm_algorithm_desc_t kLinearAlltoall;
extern const hcomm_algorithm_desc_t kLinearAlltoallv;

// Every algorithm here serves any message and communicator size, and host
// and CUDA memory (schedules name buffers; copies go to the buffers' device).
constexpr hcomm_algorithm_desc_t exchange_algorithm(const char* name, hcomm_coll_t coll,
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
