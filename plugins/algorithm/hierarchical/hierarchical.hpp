// The hierarchical algorithms: compositions of flat collectives over groups
// of the communicator (each host's ranks, the rails of counterparts, the
// hosts' leaders), each part built by the algorithm the core's selector
// picks for its group (hcomm_coll_part_t), so that transfers cross hosts
// only between the rails or the leaders. On one host, or with one rank per
// host, they decline: their cost is infinite and their builds return
// HCOMM_ERR_UNSUPPORTED, so such communicators, and the groups of their own
// parts, run what the flat algorithms give them.
#pragma once

#include <cstdint>
#include <vector>

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

// The group sizes the parts' matches and the core's rank numbers allow.
constexpr int kMaxRanks = 1 << 17;

// The segments a message of `chunks` chunks is cut into, each through every
// part of a composition, so that one segment's parts between hosts overlap
// the next one's and the previous one's within hosts.
constexpr uint32_t kMaxSegments = 8;
inline uint32_t segments_for(uint32_t chunks) { return chunks < kMaxSegments ? (chunks ? chunks : 1) : kMaxSegments; }

// What a hierarchical builder sees: the call and the hosts.
struct HierCall {
  const Call& call;
  const Hosts& hosts;
};
using HierBuildFn = void (*)(const HierCall& call, ScheduleWriter& out);

// run_builder with the hosts of the view (HCOMM_ERR_INVALID_ARGUMENT for a
// node_of out of range; HCOMM_ERR_UNSUPPORTED on one host, with one rank per
// host, or on a core without parts).
hcomm_result_t run_hierarchical(const char* algorithm, hcomm_coll_t coll, const hcomm_coll_args_t* args,
                                const hcomm_comm_view_t* comm, hcomm_schedule_builder_t* builder,
                                HierBuildFn build) noexcept;

// One part of a hierarchical schedule: `coll` over `ranks` in the whole
// call's dtype, op and memory kind. The layout arrays, where the collective
// has them, are by group rank and live until add() returns.
struct Part {
  hcomm_coll_t coll;
  const std::vector<int>& ranks;
  uint64_t count = 0;
  int root = 0;
  bool in_place = false;
  hcomm_bufref_t send, recv;
  uint32_t id;
  uint32_t flags = 0;  // hcomm_part_flags_t
  std::vector<int32_t> deps = {};
  const std::vector<size_t>* send_counts = nullptr;
  const std::vector<size_t>* send_displs = nullptr;
  const std::vector<size_t>* recv_counts = nullptr;
  const std::vector<size_t>* recv_displs = nullptr;

  // Adds the part; returns the step that ends it (its dependencies joined
  // first where there are more than a step may have).
  int32_t add(const Call& whole, ScheduleWriter& out) const;
};

// A step that completes once all `steps` (-1 entries ignored) have: one of
// them, or empty copies that wait for up to HCOMM_STEP_MAX_DEPS each. -1
// when there is none.
int32_t join(std::vector<int32_t> steps, ScheduleWriter& out);

}  // namespace hcomm::algo
