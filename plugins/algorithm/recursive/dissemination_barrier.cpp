// Dissemination barrier: ceil(log2 n) rounds of empty messages. A rank's
// round k + 1 signal waits for its round k receive and its round k signal,
// which waited in turn, so what it signals vouches for every rank it has
// heard so far (waiting for the receive alone would not: a late round-k-1
// message would go unvouched). Receives wait for nothing: posted at once,
// each matches its message as it arrives, and none waits for a send.
#include "common/call.hpp"
#include "common/patterns.hpp"
#include "common/services.hpp"
#include "recursive.hpp"

namespace hcomm::algo {

namespace {

void build_dissemination(const Call& call, ScheduleWriter& out) {
  const Dissemination pattern(call.nranks, call.rank);
  int32_t signalled = -1, heard = -1;  // the previous round's steps
  for (int round = 0; round < pattern.rounds(); ++round) {
    const uint32_t match = static_cast<uint32_t>(round);
    hcomm_step_t signal = {.kind = HCOMM_STEP_SEND,
                           .peer = pattern.send_peer(round),
                           .match = match,
                           .src = at(HCOMM_BUF_SEND, 0),
                           .nchunks = 1};
    if (round > 0) {
      wait_whole(signal, heard);
      wait_whole(signal, signalled);
    }
    signalled = out.add(signal);
    heard = out.add({.kind = HCOMM_STEP_RECV,
                     .peer = pattern.recv_peer(round),
                     .match = match,
                     .dst = at(HCOMM_BUF_RECV, 0),
                     .nchunks = 1});
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
constinit const hcomm_algorithm_desc_t kDisseminationBarrier =
    any_size_algorithm("dissemination", HCOMM_COLL_BARRIER, dissemination_cost, dissemination_build);

}  // namespace hcomm::algo
