// The hierarchical algorithms: one flat schedule over the whole communicator
// whose transfers cross hosts only at the inter-host level, built from the
// hosts the view describes (hosts.hpp). On one host they decline: their
// cost is infinite and their builds return HCOMM_ERR_UNSUPPORTED, so
// single-host communicators run what the flat algorithms give them.
#pragma once

#include <cstdint>

#include "common/call.hpp"
#include "common/descriptor.hpp"
#include "hcomm/plugin/algorithm.h"
#include "hosts.hpp"

namespace hcomm::algo {

extern const hcomm_algorithm_desc_t kHierRingAllreduce;
extern const hcomm_algorithm_desc_t kHierLeaderAllreduce;
extern const hcomm_algorithm_desc_t kHierBroadcast;
extern const hcomm_algorithm_desc_t kHierReduce;
extern const hcomm_algorithm_desc_t kHierAllgather;
extern const hcomm_algorithm_desc_t kHierAllgatherv;
extern const hcomm_algorithm_desc_t kHierReduceScatter;
extern const hcomm_algorithm_desc_t kHierReduceScatterV;

// Item ids hold a rank (allgather, reduce_scatter) or a segment's slice or
// sub-block (hier_ring: kMaxSegments times the ranks of a host or hosts).
constexpr int kMaxRanks = 1 << 17;

// What a hierarchical builder sees: the call and the hosts.
struct HierCall {
  const Call& call;
  const Hosts& hosts;
};
using HierBuildFn = void (*)(const HierCall& call, ScheduleWriter& out);

// run_builder with the hosts of the view (HCOMM_ERR_INVALID_ARGUMENT for a
// node_of out of range, HCOMM_ERR_UNSUPPORTED on one host).
hcomm_result_t run_hierarchical(const char* algorithm, hcomm_coll_t coll, const hcomm_coll_args_t* args,
                                const hcomm_comm_view_t* comm, hcomm_schedule_builder_t* builder,
                                HierBuildFn build) noexcept;

}  // namespace hcomm::algo
