// Ring allreduce: a reduce-scatter then an allgather over the ring, 2(n-1)
// steps of one block each, every transfer pipelined in chunks so that a rank
// forwards chunk k of a block as soon as it has reduced or received it.
#include "common/blocks.hpp"
#include "common/call.hpp"
#include "cost.hpp"
#include "ring.hpp"
#include "schedule.hpp"

namespace hcomm::algo {

namespace {

// One pass of 2(n-1) steps with first = rank. During the reduce-scatter
// (t < n - 1) a received block is reduced with this rank's own input, read
// from SEND, into RECV; the last of those reductions finishes its block.
// During the allgather received blocks land in RECV as they are. All blocks
// share one chunk count (their sizes differ by one element at most).
void build_ring(const Call& call, ScheduleWriter& out) {
  if (call.bytes == 0) return;
  const int n = call.nranks;
  if (n == 1) {
    copy_input_to_output(call, out);
    return;
  }
  const BlockPartition blocks(call.args.count, n, call.args.dtype_size);
  const uint32_t nchunks = out.chunks(blocks.max_bytes(), call.args.dtype_size);
  const uint32_t reduce_steps = static_cast<uint32_t>(n - 1);
  const RingPass pass = {
      .steps = 2 * reduce_steps,
      .first = call.rank,
      .bytes = [&](int block) { return blocks.bytes(block); },
      .chunks = [&](int) { return nchunks; },
      .input = [&](int block) { return at(HCOMM_BUF_SEND, blocks.offset(block)); },
      .receive =
          [&](uint32_t t, int block, hcomm_step_t& recv) {
            recv.dst = at(HCOMM_BUF_RECV, blocks.offset(block));
            if (t >= reduce_steps) return;
            recv.kind = HCOMM_STEP_RECV_REDUCE;
            recv.src = at(HCOMM_BUF_SEND, blocks.offset(block));
            if (t + 1 == reduce_steps) recv.flags = HCOMM_STEP_FINAL;
          },
  };
  add_ring_pass(pass, Ring(n, call.rank), out);
}

// 2(n-1) messages each way of bytes/n, and (n-1)/n of the data reduced; a
// lone rank copies its input unless in place.
double ring_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm) {
  const double bytes = static_cast<double>(args->count) * static_cast<double>(args->dtype_size);
  const hcomm_link_model_t& link = comm->link;
  const int n = comm->nranks;
  if (n <= 1) return lone_rank_cost(*args, args->count * args->dtype_size, link);
  const double share = bytes / n;
  return 2.0 * (n - 1) * (link.alpha_us + share * link.beta_us_per_byte) + (n - 1) * share * link.gamma_us_per_byte;
}

hcomm_result_t ring_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                          hcomm_schedule_builder_t* builder) {
  return run_builder("ring allreduce", HCOMM_COLL_ALLREDUCE, args, comm, builder, build_ring);
}

}  // namespace

constinit const hcomm_algorithm_desc_t kRingAllreduce =
    any_size_algorithm("ring", HCOMM_COLL_ALLREDUCE, ring_cost, ring_build, kMaxRingPassRanks / 2);

}  // namespace hcomm::algo
