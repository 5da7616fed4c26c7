// Chain reduce along the ring toward the root: root + 1 -> root + 2 -> ...
// -> root, each rank reducing what arrives with its own input and passing
// the partial result on chunk by chunk, so that every link and every rank's
// reductions work at once.

#include "common/call.hpp"
#include "cost.hpp"
#include "ring.hpp"
#include "schedule.hpp"

namespace hcomm::algo {

namespace {

// The head (root + 1) sends its input from SEND; the ranks after it reduce
// into SCRATCH and forward from there; the root, the tail, reduces into
// RECV, finishing every element. Only the root touches RECV.
void build_chain_reduce(const Call& call, ScheduleWriter& out) {
  check_root(call);
  if (call.bytes == 0) return;
  const int n = call.nranks;
  if (n == 1) {
    copy_input_to_output(call, out);
    return;
  }
  const Chain chain(n, wrap(int64_t{call.args.root} + 1, n), call.rank);
  const uint32_t nchunks = out.chunks(call.bytes, call.args.dtype_size);
  int32_t reduced = -1;
  hcomm_bufref_t partial = at(HCOMM_BUF_SEND, 0);
  if (!chain.is_head()) {
    const hcomm_step_t recv = {.kind = HCOMM_STEP_RECV_REDUCE,
                               .flags = chain.is_tail() ? uint32_t{HCOMM_STEP_FINAL} : 0,
                               .peer = chain.prev(),
                               .src = at(HCOMM_BUF_SEND, 0),
                               .dst = at(chain.is_tail() ? HCOMM_BUF_RECV : HCOMM_BUF_SCRATCH, 0),
                               .bytes = call.bytes,
                               .nchunks = nchunks};
    reduced = out.add(recv);
    partial = recv.dst;
    if (!chain.is_tail()) out.need_scratch(call.bytes);
  }
  if (chain.is_tail()) return;
  hcomm_step_t send = {
      .kind = HCOMM_STEP_SEND, .peer = chain.next(), .src = partial, .bytes = call.bytes, .nchunks = nchunks};
  if (!chain.is_head()) wait_chunkwise(send, reduced);
  out.add(send);
}

// (n - 1 + k - 1)(alpha + (beta + gamma) B/k) for k chunks: each hop
// receives and reduces a chunk.
double chain_reduce_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm) {
  const uint64_t bytes = args->count * args->dtype_size;
  const hcomm_link_model_t& link = comm->link;
  if (comm->nranks <= 1) return lone_rank_cost(*args, bytes, link);
  return chain_cost(comm->nranks, bytes, pipeline_chunks(*comm, bytes, args->dtype_size), link.alpha_us,
                    link.beta_us_per_byte + link.gamma_us_per_byte);
}

hcomm_result_t chain_reduce_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                                  hcomm_schedule_builder_t* builder) {
  return run_builder("ring reduce", HCOMM_COLL_REDUCE, args, comm, builder, build_chain_reduce);
}

}  // namespace

constinit const hcomm_algorithm_desc_t kRingReduce =
    any_size_algorithm("ring", HCOMM_COLL_REDUCE, chain_reduce_cost, chain_reduce_build);

}  // namespace hcomm::algo
