// Chain scan and exscan: 0 -> 1 -> ... -> n-1, each rank receiving the
// reduction of the ranks before it, combining it with its own input and
// passing the result on chunk by chunk, so that every link and every rank's
// reduction work at once. For large messages: each rank sends and reduces
// the message once, where recursive doubling does so log2 n times.
//
// Operand order: what arrives (the ranks before) is the left operand. The
// executor's RECV_REDUCE would put it on the right (dst = src op what
// arrived), so a RECV and a REDUCE (dst = src op src2) with the received
// data as src do the combining.

#include "common/call.hpp"
#include "cost.hpp"
#include "ring.hpp"
#include "schedule.hpp"

namespace hcomm::algo {

namespace {

hcomm_step_t whole_message(const Call& call, uint32_t nchunks) { return {.bytes = call.bytes, .nchunks = nchunks}; }

// The head sends its input and, unless in place, copies it to RECV; every
// other rank receives the prefix into RECV, or into SCRATCH in place (RECV
// still holds its input), reduces it with its input into RECV and, but the
// tail, forwards RECV.
void build_chain_scan(const Call& call, ScheduleWriter& out) {
  if (call.bytes == 0) return;
  const Chain chain(call.nranks, 0, call.rank);
  const uint32_t nchunks = out.chunks(call.bytes, call.args.dtype_size);
  if (chain.is_head()) {
    copy_input_to_output(call, out);
    if (chain.is_tail()) return;
    hcomm_step_t send = whole_message(call, nchunks);
    send.kind = HCOMM_STEP_SEND;
    send.peer = chain.next();
    send.src = at(HCOMM_BUF_SEND, 0);
    out.add(send);
    return;
  }
  const hcomm_bufref_t prefix = at(call.args.in_place ? HCOMM_BUF_SCRATCH : HCOMM_BUF_RECV, 0);
  if (call.args.in_place) out.need_scratch(call.bytes);
  hcomm_step_t recv = whole_message(call, nchunks);
  recv.kind = HCOMM_STEP_RECV;
  recv.peer = chain.prev();
  recv.dst = prefix;
  hcomm_step_t reduce = whole_message(call, nchunks);
  reduce.kind = HCOMM_STEP_REDUCE;
  reduce.src = prefix;
  reduce.src2 = at(HCOMM_BUF_SEND, 0);
  reduce.dst = at(HCOMM_BUF_RECV, 0);
  wait_chunkwise(reduce, out.add(recv));
  const int32_t reduced = out.add(reduce);
  if (chain.is_tail()) return;
  hcomm_step_t send = whole_message(call, nchunks);
  send.kind = HCOMM_STEP_SEND;
  send.peer = chain.next();
  send.src = at(HCOMM_BUF_RECV, 0);
  wait_chunkwise(send, reduced);
  out.add(send);
}

// The head sends its input; every other rank receives its result, the
// prefix of the ranks before it, and, but the tail, forwards the prefix
// reduced with its input from SCRATCH. In place (RECV holds the input) the
// prefix lands in SCRATCH and goes to RECV once the input was read; the
// tail, which forwards nothing, receives into RECV at once.
void build_chain_exscan(const Call& call, ScheduleWriter& out) {
  if (call.bytes == 0 || call.nranks == 1) return;
  const Chain chain(call.nranks, 0, call.rank);
  const uint32_t nchunks = out.chunks(call.bytes, call.args.dtype_size);
  hcomm_step_t send = whole_message(call, nchunks);
  send.kind = HCOMM_STEP_SEND;
  send.peer = chain.next();
  if (chain.is_head()) {
    send.src = at(HCOMM_BUF_SEND, 0);
    out.add(send);
    return;
  }
  const bool staged = call.args.in_place && !chain.is_tail();
  const hcomm_bufref_t prefix = at(staged ? HCOMM_BUF_SCRATCH : HCOMM_BUF_RECV, 0);
  hcomm_step_t recv = whole_message(call, nchunks);
  recv.kind = HCOMM_STEP_RECV;
  recv.peer = chain.prev();
  recv.dst = prefix;
  const int32_t received = out.add(recv);
  if (chain.is_tail()) return;
  const hcomm_bufref_t forward = at(HCOMM_BUF_SCRATCH, staged ? call.bytes : 0);
  out.need_scratch(staged ? 2 * call.bytes : call.bytes);
  hcomm_step_t reduce = whole_message(call, nchunks);
  reduce.kind = HCOMM_STEP_REDUCE;
  reduce.src = prefix;
  reduce.src2 = at(HCOMM_BUF_SEND, 0);
  reduce.dst = forward;
  wait_chunkwise(reduce, received);
  const int32_t reduced = out.add(reduce);
  send.src = forward;
  wait_chunkwise(send, reduced);
  out.add(send);
  if (!staged) return;
  hcomm_step_t copy = whole_message(call, nchunks);
  copy.kind = HCOMM_STEP_COPY;
  copy.src = prefix;
  copy.dst = at(HCOMM_BUF_RECV, 0);
  wait_chunkwise(copy, reduced);  // which read the input there
  out.add(copy);
}

// (n - 1 + k - 1)(alpha + (beta + gamma) B/k) for k chunks: each hop
// receives a chunk and reduces it.
double chain_scan_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm) {
  const uint64_t bytes = args->count * args->dtype_size;
  const hcomm_link_model_t& link = comm->link;
  if (comm->nranks <= 1) return args->coll == HCOMM_COLL_EXSCAN ? 0.0 : lone_rank_cost(*args, bytes, link);
  return chain_cost(comm->nranks, bytes, pipeline_chunks(*comm, bytes, args->dtype_size), link.alpha_us,
                    link.beta_us_per_byte + link.gamma_us_per_byte);
}

hcomm_result_t chain_scan_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                                hcomm_schedule_builder_t* builder) {
  return run_builder("ring scan", HCOMM_COLL_SCAN, args, comm, builder, build_chain_scan);
}

hcomm_result_t chain_exscan_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                                  hcomm_schedule_builder_t* builder) {
  return run_builder("ring exscan", HCOMM_COLL_EXSCAN, args, comm, builder, build_chain_exscan);
}

}  // namespace

// Lower ranks' data always the left operand: an op that does not commute too.
constinit const hcomm_algorithm_desc_t kRingScan =
    keeping_rank_order(any_size_algorithm("ring", HCOMM_COLL_SCAN, chain_scan_cost, chain_scan_build));
constinit const hcomm_algorithm_desc_t kRingExscan =
    keeping_rank_order(any_size_algorithm("ring", HCOMM_COLL_EXSCAN, chain_scan_cost, chain_exscan_build));

}  // namespace hcomm::algo
