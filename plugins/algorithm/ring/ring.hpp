// The algorithms this plugin registers, all named "ring": one descriptor per
// collective, so that each build checks that it was given its collective.
#pragma once

#include <cstdint>

#include "hcomm/plugin/algorithm.h"

namespace hcomm::algo {

extern const hcomm_algorithm_desc_t kRingAllreduce;
extern const hcomm_algorithm_desc_t kRingAllgather;
extern const hcomm_algorithm_desc_t kRingAllgatherv;
extern const hcomm_algorithm_desc_t kRingReduceScatter;
extern const hcomm_algorithm_desc_t kRingReduceScatterV;
extern const hcomm_algorithm_desc_t kRingBroadcast;
extern const hcomm_algorithm_desc_t kRingReduce;

// Ring transfers are matched by their step number, which must stay below
// 2^24: with n - 1 steps per pass around the ring, one pass serves up to 2^24
// ranks and the allreduce's two passes half as many.
constexpr int kMaxRingPassRanks = 1 << 24;

// Every ring algorithm serves any message size and host and CUDA memory (the
// schedules name buffers; copies and reductions go to the buffers' device).
constexpr hcomm_algorithm_desc_t ring_algorithm(hcomm_coll_t coll, int max_ranks,
                                                decltype(hcomm_algorithm_desc_t::cost) cost,
                                                decltype(hcomm_algorithm_desc_t::build) build) {
  return {.size = sizeof(hcomm_algorithm_desc_t),
          .name = "ring",
          .colls = 1u << coll,
          .mem_kinds = HCOMM_MEM_HOST | HCOMM_MEM_CUDA,
          .min_bytes = 0,
          .max_bytes = UINT64_MAX,
          .min_ranks = 1,
          .max_ranks = max_ranks,
          .cost = cost,
          .build = build};
}

}  // namespace hcomm::algo
