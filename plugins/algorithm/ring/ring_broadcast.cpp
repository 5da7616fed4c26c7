// Chain broadcast along the ring: root -> root + 1 -> ... -> root - 1, the
// message cut into chunks that each rank forwards as they arrive, so that
// every link carries chunks at once. For large messages on few ranks: the
// root sends the message once, where a tree's root sends it log2 n times.

#include "common/call.hpp"
#include "cost.hpp"
#include "ring.hpp"
#include "schedule.hpp"

namespace hcomm::algo {

namespace {

// The root sends from SEND and, unless in place, copies SEND to its RECV
// beside it; every other rank receives into RECV and, but the tail,
// forwards from there.
void build_chain_broadcast(const Call& call, ScheduleWriter& out) {
  check_root(call);
  if (call.bytes == 0) return;
  const Chain chain(call.nranks, call.args.root, call.rank);
  if (chain.is_head()) copy_input_to_output(call, out);
  const uint32_t nchunks = out.chunks(call.bytes, call.args.dtype_size);
  int32_t received = -1;
  if (!chain.is_head())
    received = out.add({.kind = HCOMM_STEP_RECV,
                        .peer = chain.prev(),
                        .dst = at(HCOMM_BUF_RECV, 0),
                        .bytes = call.bytes,
                        .nchunks = nchunks});
  if (chain.is_tail()) return;
  hcomm_step_t send = {.kind = HCOMM_STEP_SEND,
                       .peer = chain.next(),
                       .src = at(chain.is_head() ? HCOMM_BUF_SEND : HCOMM_BUF_RECV, 0),
                       .bytes = call.bytes,
                       .nchunks = nchunks};
  if (!chain.is_head()) wait_chunkwise(send, received);
  out.add(send);
}

// (n - 1 + k - 1)(alpha + beta B/k) for k chunks; the root's copy runs
// beside its sends.
double chain_broadcast_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm) {
  const uint64_t bytes = args->count * args->dtype_size;
  if (comm->nranks <= 1) return lone_rank_cost(*args, bytes, comm->link);
  return chain_cost(comm->nranks, bytes, pipeline_chunks(*comm, bytes, args->dtype_size), comm->link.alpha_us,
                    comm->link.beta_us_per_byte);
}

hcomm_result_t chain_broadcast_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                                     hcomm_schedule_builder_t* builder) {
  return run_builder("ring broadcast", HCOMM_COLL_BROADCAST, args, comm, builder, build_chain_broadcast);
}

}  // namespace

constinit const hcomm_algorithm_desc_t kRingBroadcast =
    any_size_algorithm("ring", HCOMM_COLL_BROADCAST, chain_broadcast_cost, chain_broadcast_build);

}  // namespace hcomm::algo
