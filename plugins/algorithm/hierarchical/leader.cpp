// Leader-based schedules, for small messages and the rooted collectives: one
// rank per host (its lowest, or the root on the root's host) stands for the
// host between hosts. Each level is a binomial tree, inside the hosts and
// among the leaders; every step carries the whole message in the same chunks,
// so chunk c moves on from level to level as soon as it is here.
//   reduce: host trees reduce to the leaders, the leaders' tree to the root.
//   broadcast: the leaders' tree from the root, then the host trees.
//   hier_leader allreduce: a reduce to rank 0, then a broadcast from it.
#include "cost.hpp"
#include "hierarchical.hpp"
#include "passes.hpp"

namespace hcomm::algo {

namespace {

enum Phase : uint32_t { kHostReduce, kLeaderReduce, kLeaderBroadcast, kHostBroadcast };

// The levels around this rank when `root` is the root of the call.
struct Levels {
  Group host;  // this rank's host; `leader` its tree's root position
  int leader;
  Group leaders;  // one rank per host, in host order; me is -1 off the leaders
  int root_host;
  bool is_leader;
};

Levels levels(const HierCall& h, int root) {
  const Hosts& hosts = h.hosts;
  const int rank = h.call.rank, host = hosts.host_of(rank), root_host = hosts.host_of(root);
  Levels l{.host = {hosts.ranks(host), hosts.local_of(rank)},
           .leader = host == root_host ? hosts.local_of(root) : 0,
           .leaders = {{}, -1},
           .root_host = root_host,
           .is_leader = false};
  for (int k = 0; k < hosts.count(); ++k) {
    const int leader = k == root_host ? root : hosts.ranks(k)[0];
    l.leaders.ranks.push_back(leader);
    if (leader == rank) l.leaders.me = k;
  }
  l.is_leader = l.leaders.me >= 0;
  return l;
}

TreeMessage message(const Call& call, uint32_t phase, ScheduleWriter& out) {
  return {.match = match_of(phase, 0), .bytes = call.bytes, .nchunks = out.chunks(call.bytes, call.args.dtype_size)};
}

// Every rank's input reduced to `root`'s RECV; the other ranks accumulate in
// `partials` (allreduce: RECV; reduce: SCRATCH, as they own no RECV).
Placed add_reduce(const HierCall& h, int root, hcomm_buffer_t partials, ScheduleWriter& out) {
  const Call& call = h.call;
  const Levels l = levels(h, root);
  const hcomm_bufref_t acc = at(call.rank == root ? HCOMM_BUF_RECV : partials, 0);
  if (acc.buffer == HCOMM_BUF_SCRATCH) out.need_scratch(call.bytes);
  Placed value = add_tree_reduce(l.host, l.leader, message(call, kHostReduce, out), {.at = at(HCOMM_BUF_SEND, 0)}, acc,
                                 false, out);
  if (l.is_leader)
    value = add_tree_reduce(l.leaders, l.root_host, message(call, kLeaderReduce, out), value, acc, true, out);
  return value;
}

// `input` (at the root) to every other rank's RECV.
void add_broadcast(const HierCall& h, int root, Placed input, ScheduleWriter& out) {
  const Call& call = h.call;
  const Levels l = levels(h, root);
  Placed value = input;
  if (l.is_leader)
    value = add_tree_broadcast(l.leaders, l.root_host, message(call, kLeaderBroadcast, out), value,
                               at(HCOMM_BUF_RECV, 0), out);
  add_tree_broadcast(l.host, l.leader, message(call, kHostBroadcast, out), value, at(HCOMM_BUF_RECV, 0), out);
}

void build_allreduce(const HierCall& h, ScheduleWriter& out) {
  if (h.call.bytes == 0) return;
  add_broadcast(h, 0, add_reduce(h, 0, HCOMM_BUF_RECV, out), out);
}

void build_reduce(const HierCall& h, ScheduleWriter& out) {
  check_root(h.call);
  if (h.call.bytes == 0) return;
  add_reduce(h, h.call.args.root, HCOMM_BUF_SCRATCH, out);
}

void build_broadcast(const HierCall& h, ScheduleWriter& out) {
  check_root(h.call);
  if (h.call.bytes == 0) return;
  if (h.call.rank == h.call.args.root) copy_input_to_output(h.call, out);
  add_broadcast(h, h.call.args.root, {.at = at(HCOMM_BUF_SEND, 0)}, out);
}

// The root's sends dominate a pipelined binomial tree: ceil(log2 m) times
// the message per level, host trees over the largest host.
double tree_levels(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm, bool reduces) {
  const std::optional<HostShape> shape = host_shape(*comm);
  if (!shape) return declined_cost();
  const uint64_t bytes = args->count * args->dtype_size;
  const uint32_t chunks = pipeline_chunks(bytes, args->dtype_size);
  const hcomm_link_model_t &in = comm->intra, &ex = comm->inter;
  const double b = static_cast<double>(bytes);
  return tree_level(shape->max_local, b, chunks, in.alpha_us,
                    in.beta_us_per_byte + (reduces ? in.gamma_us_per_byte : 0)) +
         tree_level(shape->hosts, b, chunks, ex.alpha_us, ex.beta_us_per_byte + (reduces ? ex.gamma_us_per_byte : 0));
}

double allreduce_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm) {
  return tree_levels(args, comm, true) + tree_levels(args, comm, false);
}
double reduce_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm) {
  return tree_levels(args, comm, true);
}
double broadcast_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm) {
  return tree_levels(args, comm, false);
}

hcomm_result_t allreduce_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                               hcomm_schedule_builder_t* builder) {
  return run_hierarchical("hier_leader allreduce", HCOMM_COLL_ALLREDUCE, args, comm, builder, build_allreduce);
}
hcomm_result_t reduce_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                            hcomm_schedule_builder_t* builder) {
  return run_hierarchical("hier_leader reduce", HCOMM_COLL_REDUCE, args, comm, builder, build_reduce);
}
hcomm_result_t broadcast_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                               hcomm_schedule_builder_t* builder) {
  return run_hierarchical("hier_leader broadcast", HCOMM_COLL_BROADCAST, args, comm, builder, build_broadcast);
}

}  // namespace

constinit const hcomm_algorithm_desc_t kHierLeaderAllreduce =
    any_size_algorithm("hier_leader", HCOMM_COLL_ALLREDUCE, allreduce_cost, allreduce_build, kMaxRanks);
constinit const hcomm_algorithm_desc_t kHierReduce =
    any_size_algorithm("hier_leader", HCOMM_COLL_REDUCE, reduce_cost, reduce_build, kMaxRanks);
constinit const hcomm_algorithm_desc_t kHierBroadcast =
    any_size_algorithm("hier_leader", HCOMM_COLL_BROADCAST, broadcast_cost, broadcast_build, kMaxRanks);

}  // namespace hcomm::algo
