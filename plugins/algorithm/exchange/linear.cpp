// Linear: every transfer posted at once. The root of a gather or scatter
// exchanges with every rank directly (one hop, no forwarding: good for large
// messages on few ranks); alltoall(v) sends and receives all blocks at once
// (best at small n, where the flows into a rank are few); reduce-scatter(_v)
// of a user op that does not commute sends every block to its owner, who
// combines them in rank order.
#include <algorithm>
#include <limits>

#include "common/patterns.hpp"
#include "common/services.hpp"
#include "direct.hpp"
#include "exchange.hpp"
#include "hcomm/plugin/layout.hpp"

namespace hcomm::algo {

namespace {

// Non-roots send their block to the root; the root receives every other
// block into RECV and copies its own unless in place.
void build_gather(const Call& call, ScheduleWriter& out) {
  check_root(call);
  if (call.bytes == 0) return;
  const int root = call.args.root;
  const uint32_t nchunks = out.chunks(call.bytes, call.args.dtype_size);
  if (call.rank != root) {
    out.add(
        {.kind = HCOMM_STEP_SEND, .peer = root, .src = at(HCOMM_BUF_SEND, 0), .bytes = call.bytes, .nchunks = nchunks});
    return;
  }
  const plugin::BlockLayout blocks = plugin::BlockLayout::recv(call.args, call.nranks);
  if (!call.args.in_place)
    out.add({.kind = HCOMM_STEP_COPY,
             .src = at(HCOMM_BUF_SEND, 0),
             .dst = at(HCOMM_BUF_RECV, blocks.offset(root)),
             .bytes = call.bytes,
             .nchunks = 1});
  for (int k = 1; k < call.nranks; ++k) {
    const int peer = wrap(int64_t{root} + k, call.nranks);
    out.add({.kind = HCOMM_STEP_RECV,
             .peer = peer,
             .dst = at(HCOMM_BUF_RECV, blocks.offset(peer)),
             .bytes = call.bytes,
             .nchunks = nchunks});
  }
}

// The root sends block r of SEND to rank r and copies its own unless in
// place; the others receive theirs into RECV.
void build_scatter(const Call& call, ScheduleWriter& out) {
  check_root(call);
  if (call.bytes == 0) return;
  const int root = call.args.root;
  const uint32_t nchunks = out.chunks(call.bytes, call.args.dtype_size);
  if (call.rank != root) {
    out.add(
        {.kind = HCOMM_STEP_RECV, .peer = root, .dst = at(HCOMM_BUF_RECV, 0), .bytes = call.bytes, .nchunks = nchunks});
    return;
  }
  const plugin::BlockLayout blocks = plugin::BlockLayout::send(call.args, call.nranks);
  if (!call.args.in_place)
    out.add({.kind = HCOMM_STEP_COPY,
             .src = at(HCOMM_BUF_SEND, blocks.offset(root)),
             .dst = at(HCOMM_BUF_RECV, 0),
             .bytes = call.bytes,
             .nchunks = 1});
  for (int k = 1; k < call.nranks; ++k) {
    const int peer = wrap(int64_t{root} + k, call.nranks);
    out.add({.kind = HCOMM_STEP_SEND,
             .peer = peer,
             .src = at(HCOMM_BUF_SEND, blocks.offset(peer)),
             .bytes = call.bytes,
             .nchunks = nchunks});
  }
}

void build_alltoall(const Call& call, ScheduleWriter& out) { build_direct_alltoall(call, out, Pacing::kAllAtOnce); }

// Reduce-scatter(_v) for user ops that do not commute (HCOMM_OP_USER_ORDERED):
// every rank sends block p of its input to rank p at once, and rank p
// combines the blocks in rank order, ((x0 op x1) op x2) ..., each combination
// after the one before, in SCRATCH, the last one into RECV. It serves no
// other call: for ops that commute, the ring and halving-doubling move less.
void build_ordered_reduce_scatter(const Call& call, ScheduleWriter& out) {
  if (call.args.op != HCOMM_OP_USER_ORDERED)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_UNSUPPORTED, "%s serves user ops that do not commute only", call.algorithm);
  if (call.args.coll == HCOMM_COLL_REDUCE_SCATTER_V) check_recv_layout(call, false);
  const plugin::BlockLayout blocks = plugin::BlockLayout::send(call.args, call.nranks);
  const size_t es = call.args.dtype_size;
  const int me = call.rank, n = call.nranks;
  for (int p = 0; p < n; ++p)
    if (p != me && blocks.bytes(p))
      out.add({.kind = HCOMM_STEP_SEND,
               .peer = p,
               .src = at(HCOMM_BUF_SEND, blocks.offset(p)),
               .bytes = blocks.bytes(p),
               .nchunks = out.chunks(blocks.bytes(p), es)});
  const uint64_t bytes = blocks.bytes(me);
  if (bytes == 0) return;
  const hcomm_bufref_t own = at(HCOMM_BUF_SEND, blocks.offset(me));
  if (n == 1) {
    if (!call.args.in_place)
      out.add({.kind = HCOMM_STEP_COPY, .src = own, .dst = at(HCOMM_BUF_RECV, 0), .bytes = bytes, .nchunks = 1});
    return;
  }
  const uint32_t nchunks = out.chunks(bytes, es);
  out.need_scratch(bytes);
  hcomm_bufref_t left = own;  // the lower ranks' result so far; rank 0's block starts it
  int32_t last = -1;
  for (int q = me == 0 ? 1 : 0; q < n; ++q) {
    const hcomm_bufref_t dst = at(q == n - 1 ? HCOMM_BUF_RECV : HCOMM_BUF_SCRATCH, 0);
    hcomm_step_t s = {.peer = q, .dst = dst, .bytes = bytes, .nchunks = nchunks};
    if (q == 0) {
      s.kind = HCOMM_STEP_RECV;
    } else if (q == me) {
      s.kind = HCOMM_STEP_REDUCE, s.peer = 0, s.src = left, s.src2 = own;
    } else {
      s.kind = HCOMM_STEP_RECV_REDUCE, s.src = left;
    }
    if (last >= 0) wait_chunkwise(s, last);
    last = out.add(s);
    left = dst;
  }
}

// The cost of posting `messages` transfers at once, `inflows` of them into
// one rank. Of α, a message's cost, the sender's own work (kInjectShare) does
// not overlap with the next message's; the rest, flight time, does. A rank
// takes in kFullSpeedFlows flows at full speed; each flow more queues behind
// the others for a message's latency.
constexpr double kInjectShare = 0.5;
constexpr int kFullSpeedFlows = 4;

double posted_at_once(const hcomm_link_model_t& link, int messages, int inflows) {
  if (messages <= 0) return 0.0;
  return link.alpha_us * (1 + kInjectShare * (messages - 1) + std::max(0, inflows - kFullSpeedFlows));
}

// The root moves n-1 blocks and copies its own unless in place.
double rooted_cost(const hcomm_coll_args_t& args, const hcomm_comm_view_t& comm, int inflows) {
  const double block = static_cast<double>(args.count) * static_cast<double>(args.dtype_size);
  const hcomm_link_model_t& link = comm.link;
  const int others = comm.nranks - 1;
  return posted_at_once(link, others, inflows) + others * block * link.beta_us_per_byte +
         (args.in_place ? 0.0 : block * link.gamma_us_per_byte);
}

double gather_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm) {
  return rooted_cost(*args, *comm, comm->nranks - 1);
}

double scatter_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm) {
  return rooted_cost(*args, *comm, 1);
}

// n-1 blocks each way posted at once, each combined once.
double ordered_reduce_scatter_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm) {
  if (args->op != HCOMM_OP_USER_ORDERED) return std::numeric_limits<double>::infinity();
  const plugin::BlockLayout blocks = plugin::BlockLayout::send(*args, comm->nranks);
  double total = 0;
  for (int r = 0; r < comm->nranks; ++r) total += static_cast<double>(blocks.bytes(r));
  const double block = total / comm->nranks;
  const hcomm_link_model_t& link = comm->link;
  const int others = comm->nranks - 1;
  return posted_at_once(link, others, others) + others * block * (link.beta_us_per_byte + link.gamma_us_per_byte);
}

// As pairwise, with the n-1 transfers each way posted at once.
double alltoall_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm) {
  return direct_alltoall_cost(*args, *comm, posted_at_once(comm->link, comm->nranks - 1, comm->nranks - 1));
}

hcomm_result_t gather_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                            hcomm_schedule_builder_t* builder) {
  return run_builder("linear gather", HCOMM_COLL_GATHER, args, comm, builder, build_gather);
}

hcomm_result_t scatter_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                             hcomm_schedule_builder_t* builder) {
  return run_builder("linear scatter", HCOMM_COLL_SCATTER, args, comm, builder, build_scatter);
}

hcomm_result_t alltoall_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                              hcomm_schedule_builder_t* builder) {
  return run_builder("linear alltoall", HCOMM_COLL_ALLTOALL, args, comm, builder, build_alltoall);
}

hcomm_result_t alltoallv_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                               hcomm_schedule_builder_t* builder) {
  return run_builder("linear alltoallv", HCOMM_COLL_ALLTOALLV, args, comm, builder, build_alltoall);
}

hcomm_result_t reduce_scatter_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                                    hcomm_schedule_builder_t* builder) {
  return run_builder("linear reduce_scatter", HCOMM_COLL_REDUCE_SCATTER, args, comm, builder,
                     build_ordered_reduce_scatter);
}

hcomm_result_t reduce_scatter_v_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                                      hcomm_schedule_builder_t* builder) {
  return run_builder("linear reduce_scatter_v", HCOMM_COLL_REDUCE_SCATTER_V, args, comm, builder,
                     build_ordered_reduce_scatter);
}

}  // namespace

constinit const hcomm_algorithm_desc_t kLinearReduceScatter = keeping_rank_order(
    any_size_algorithm("linear", HCOMM_COLL_REDUCE_SCATTER, ordered_reduce_scatter_cost, reduce_scatter_build));
constinit const hcomm_algorithm_desc_t kLinearReduceScatterV = keeping_rank_order(
    any_size_algorithm("linear", HCOMM_COLL_REDUCE_SCATTER_V, ordered_reduce_scatter_cost, reduce_scatter_v_build));
constinit const hcomm_algorithm_desc_t kLinearGather =
    any_size_algorithm("linear", HCOMM_COLL_GATHER, gather_cost, gather_build);
constinit const hcomm_algorithm_desc_t kLinearScatter =
    any_size_algorithm("linear", HCOMM_COLL_SCATTER, scatter_cost, scatter_build);
constinit const hcomm_algorithm_desc_t kLinearAlltoall =
    any_size_algorithm("linear", HCOMM_COLL_ALLTOALL, alltoall_cost, alltoall_build);
constinit const hcomm_algorithm_desc_t kLinearAlltoallv =
    any_size_algorithm("linear", HCOMM_COLL_ALLTOALLV, alltoall_cost, alltoallv_build);

}  // namespace hcomm::algo
