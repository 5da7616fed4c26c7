// Ring allreduce: a reduce-scatter then an allgather over the ring, 2(n-1)
// steps of one block each, every transfer pipelined in chunks so that a rank
// forwards chunk k of a block as soon as it has reduced or received it.
#include <climits>

#include "common/services.hpp"
#include "ring.hpp"
#include "common/blocks.hpp"
#include "common/call.hpp"
#include "common/patterns.hpp"

namespace hcomm::algo {

namespace {

// Step t sends Ring::sent_block(t) and receives Ring::received_block(t), the
// block it sends at t + 1. During the reduce-scatter (t < n - 1) a received
// block is reduced with this rank's own input, read from SEND, into RECV; the
// last of those reductions finishes its block. During the allgather received
// blocks land in RECV as they are. Transfers of empty blocks are left out on
// both ends alike, together with the steps that forward them.
void build_ring(const Call& call, ScheduleWriter& out) {
  if (call.bytes == 0) return;
  const int n = call.nranks;
  if (n == 1) {
    copy_input_to_output(call, out);
    return;
  }
  const Ring ring(n, call.rank);
  const BlockPartition blocks(call.args.count, n, call.args.dtype_size);
  const uint32_t nchunks = out.chunks(blocks.max_bytes(), call.args.dtype_size);
  const uint32_t reduce_steps = static_cast<uint32_t>(n - 1);
  int32_t received = -1;  // the step that received the block sent next
  for (uint32_t t = 0; t < 2 * reduce_steps; ++t) {
    const int sent = ring.sent_block(t, call.rank);
    if (blocks.bytes(sent) > 0) {
      hcomm_step_t send = {.kind = HCOMM_STEP_SEND,
                           .peer = ring.next(),
                           .match = t,
                           .src = at(t == 0 ? HCOMM_BUF_SEND : HCOMM_BUF_RECV, blocks.offset(sent)),
                           .bytes = blocks.bytes(sent),
                           .nchunks = nchunks};
      if (t > 0) wait_chunkwise(send, received);
      out.add(send);
    }
    const int block = ring.received_block(t, call.rank);
    if (blocks.bytes(block) == 0) {
      received = -1;
      continue;
    }
    hcomm_step_t recv = {.kind = HCOMM_STEP_RECV,
                         .peer = ring.prev(),
                         .match = t,
                         .dst = at(HCOMM_BUF_RECV, blocks.offset(block)),
                         .bytes = blocks.bytes(block),
                         .nchunks = nchunks};
    if (t < reduce_steps) {
      recv.kind = HCOMM_STEP_RECV_REDUCE;
      recv.src = at(HCOMM_BUF_SEND, blocks.offset(block));
      if (t + 1 == reduce_steps) recv.flags = HCOMM_STEP_FINAL;
    }
    received = out.add(recv);
  }
}

// 2(n-1) messages each way of bytes/n, and (n-1)/n of the data reduced; a
// lone rank copies its input unless in place.
double ring_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm) {
  const double bytes = static_cast<double>(args->count) * static_cast<double>(args->dtype_size);
  const hcomm_link_model_t& link = comm->link;
  const int n = comm->nranks;
  if (n <= 1) return args->in_place ? 0.0 : bytes * link.gamma_us_per_byte;
  const double share = bytes / n;
  return 2.0 * (n - 1) * (link.alpha_us + share * link.beta_us_per_byte) + (n - 1) * share * link.gamma_us_per_byte;
}

hcomm_result_t ring_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                          hcomm_schedule_builder_t* builder) {
  return run_builder("ring allreduce", HCOMM_COLL_ALLREDUCE, args, comm, builder, build_ring);
}

}  // namespace

constinit const hcomm_algorithm_desc_t kRingAllreduce = {
    .size = sizeof(hcomm_algorithm_desc_t),
    .name = "ring",
    .colls = 1u << HCOMM_COLL_ALLREDUCE,
    .mem_kinds = HCOMM_MEM_HOST | HCOMM_MEM_CUDA,
    .min_bytes = 0,
    .max_bytes = UINT64_MAX,
    .min_ranks = 1,
    .max_ranks = INT_MAX,
    .cost = ring_cost,
    .build = ring_build,
};

}  // namespace hcomm::algo
