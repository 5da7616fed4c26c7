// Dissemination barrier: ceil(log2 n) rounds of empty messages. A rank's
// round k + 1, its signal and its receive, waits for its round k receive, so
// what it signals in round k + 1 vouches for every rank it has heard so far.
#include <climits>

#include "common/services.hpp"
#include "recursive.hpp"
#include "common/call.hpp"
#include "common/patterns.hpp"

namespace hcomm::algo {

namespace {

void build_dissemination(const Call& call, ScheduleWriter& out) {
  const Dissemination pattern(call.nranks, call.rank);
  int32_t heard = -1;  // the receive of the previous round
  for (int round = 0; round < pattern.rounds(); ++round) {
    const uint32_t match = static_cast<uint32_t>(round);
    hcomm_step_t signal = {.kind = HCOMM_STEP_SEND,
                           .peer = pattern.send_peer(round),
                           .match = match,
                           .src = at(HCOMM_BUF_SEND, 0),
                           .nchunks = 1};
    if (round > 0) wait_whole(signal, heard);
    out.add(signal);
    hcomm_step_t hear = {.kind = HCOMM_STEP_RECV,
                         .peer = pattern.recv_peer(round),
                         .match = match,
                         .dst = at(HCOMM_BUF_RECV, 0),
                         .nchunks = 1};
    if (round > 0) wait_whole(hear, heard);
    heard = out.add(hear);
  }
}

double dissemination_cost(const hcomm_coll_args_t*, const hcomm_comm_view_t* comm) {
  return ceil_log2(comm->nranks) * comm->link.alpha_us;
}

hcomm_result_t dissemination_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                                   hcomm_schedule_builder_t* builder) {
  return run_builder("dissemination barrier", HCOMM_COLL_BARRIER, args, comm, builder, build_dissemination);
}

}  // namespace

// A barrier carries no data: whatever size the call names, it is served.
constinit const hcomm_algorithm_desc_t kDisseminationBarrier = {
    .size = sizeof(hcomm_algorithm_desc_t),
    .name = "dissemination",
    .colls = 1u << HCOMM_COLL_BARRIER,
    .mem_kinds = HCOMM_MEM_HOST | HCOMM_MEM_CUDA,
    .min_bytes = 0,
    .max_bytes = UINT64_MAX,
    .min_ranks = 1,
    .max_ranks = INT_MAX,
    .cost = dissemination_cost,
    .build = dissemination_build,
};

}  // namespace hcomm::algo
