// Leader-based schedules, for small messages and the rooted collectives: one
// rank per host (its lowest, or the root on the root's host) stands for the
// host between hosts. Host levels are binomial trees; every step carries the
// whole message in the same chunks, so chunk c moves on from level to level
// as soon as it is here.
//   reduce: host trees reduce to the leaders, the leaders' tree to the root.
//   broadcast: the leaders' tree from the root, then the host trees.
//   hier_leader allreduce: host trees reduce to the leaders, the leaders
//   allreduce by recursive doubling (one exchange per round, log2 H rounds
//   where a reduce and a broadcast would cross hosts 2 ceil(log2 H) times),
//   host trees broadcast.
#include "common/recursive_halving.hpp"
#include "cost.hpp"
#include "hierarchical.hpp"
#include "passes.hpp"

namespace hcomm::algo {

namespace {

enum Phase : uint32_t { kHostReduce, kLeaderReduce, kLeaderBroadcast, kHostBroadcast, kLeaderExchange };

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

// Every rank's input reduced to its leader's `acc`.
Placed add_host_reduce(const HierCall& h, const Levels& l, hcomm_bufref_t acc, ScheduleWriter& out) {
  return add_tree_reduce(l.host, l.leader, message(h.call, kHostReduce, out), {.at = at(HCOMM_BUF_SEND, 0)}, acc,
                         false, out);
}

// The leader's `value` to every other rank of its host's RECV.
void add_host_broadcast(const HierCall& h, const Levels& l, Placed value, ScheduleWriter& out) {
  add_tree_broadcast(l.host, l.leader, message(h.call, kHostBroadcast, out), value, at(HCOMM_BUF_RECV, 0), out);
}

void build_allreduce(const HierCall& h, ScheduleWriter& out) {
  if (h.call.bytes == 0) return;
  const Levels l = levels(h, 0);
  const hcomm_bufref_t acc = at(HCOMM_BUF_RECV, 0);
  Placed value = add_host_reduce(h, l, acc, out);
  if (l.is_leader) {
    const DoublingMatches matches = {.first_round = match_of(kLeaderExchange, 0),
                                     .fold = match_of(kLeaderExchange, kMaxItems - 2),
                                     .unfold = match_of(kLeaderExchange, kMaxItems - 1)};
    value = add_doubling_allreduce(h.call, l.leaders, matches, value, acc, true, out);
  }
  add_host_broadcast(h, l, value, out);
}

// Ranks other than the root own no RECV: they accumulate in SCRATCH.
void build_reduce(const HierCall& h, ScheduleWriter& out) {
  check_root(h.call);
  const Call& call = h.call;
  if (call.bytes == 0) return;
  const Levels l = levels(h, call.args.root);
  const hcomm_bufref_t acc = at(call.rank == call.args.root ? HCOMM_BUF_RECV : HCOMM_BUF_SCRATCH, 0);
  if (acc.buffer == HCOMM_BUF_SCRATCH) out.need_scratch(call.bytes);
  const Placed value = add_host_reduce(h, l, acc, out);
  if (l.is_leader) add_tree_reduce(l.leaders, l.root_host, message(call, kLeaderReduce, out), value, acc, true, out);
}

void build_broadcast(const HierCall& h, ScheduleWriter& out) {
  check_root(h.call);
  const Call& call = h.call;
  if (call.bytes == 0) return;
  if (call.rank == call.args.root) copy_input_to_output(call, out);
  const Levels l = levels(h, call.args.root);
  Placed value = {.at = at(HCOMM_BUF_SEND, 0)};
  if (l.is_leader)
    value = add_tree_broadcast(l.leaders, l.root_host, message(call, kLeaderBroadcast, out), value,
                               at(HCOMM_BUF_RECV, 0), out);
  add_host_broadcast(h, l, value, out);
}

double per_byte(const hcomm_link_model_t& l, bool reduces) {
  return l.beta_us_per_byte + (reduces ? l.gamma_us_per_byte : 0);
}

// The root's sends dominate a pipelined binomial tree: ceil(log2 m) times
// the message per level, host trees over the largest host.
double tree_levels(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm, bool reduces) {
  const std::optional<HostShape> shape = host_shape(*comm);
  if (!shape) return declined_cost();
  const uint64_t bytes = args->count * args->dtype_size;
  const uint32_t chunks = pipeline_chunks(*comm, bytes, args->dtype_size);
  const double b = static_cast<double>(bytes);
  return tree_level(shape->max_local, b, chunks, comm->intra.alpha_us, per_byte(comm->intra, reduces)) +
         tree_level(shape->hosts, b, chunks, comm->inter.alpha_us, per_byte(comm->inter, reduces));
}

// Host trees both ways around the leaders' log2 H exchanges of the message,
// each reduced; where H is not a power of two, a fold's message each way
// and one more reduction.
double allreduce_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm) {
  const std::optional<HostShape> shape = host_shape(*comm);
  if (!shape) return declined_cost();
  const uint64_t bytes = args->count * args->dtype_size;
  const uint32_t chunks = pipeline_chunks(*comm, bytes, args->dtype_size);
  const double b = static_cast<double>(bytes);
  const hcomm_link_model_t &in = comm->intra, &ex = comm->inter;
  const FoldedHypercube cube(shape->hosts, 0);
  const double exchange = chunks * ex.alpha_us + b * per_byte(ex, true);
  double cost = tree_level(shape->max_local, b, chunks, in.alpha_us, per_byte(in, true)) +
                tree_level(shape->max_local, b, chunks, in.alpha_us, per_byte(in, false)) + cube.rounds() * exchange;
  if (cube.size() != shape->hosts) cost += exchange + chunks * ex.alpha_us + b * ex.beta_us_per_byte;
  return cost;
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
