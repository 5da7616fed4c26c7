// Leader-based compositions, for small messages and the rooted collectives:
// one rank per host (its lowest, or the root on the root's host) stands for
// the host between hosts.
//   reduce: each host reduces to its leader, the leaders reduce to the root.
//   broadcast: the leaders broadcast from the root, then each host from its
//   leader (on the root's host from the root, at once).
//   hier_leader allreduce: each host reduces to its leader, the leaders
//   allreduce, each host broadcasts from its leader.
// Every part is the collective the selector picks for its group.
#include "common/recursive_halving.hpp"
#include "cost.hpp"
#include "hierarchical.hpp"

namespace hcomm::algo {

namespace {

enum PartId : uint32_t { kHostReduce, kLeaders, kHostBroadcast };

// The groups around this rank when `root` is the root of the call.
struct Levels {
  const std::vector<int>& host;  // this rank's host
  int leader;                    // its leader's place there
  std::vector<int> leaders;      // one rank per host, in host order
  int root_host;
  bool is_leader;
};

Levels levels(const HierCall& h, int root) {
  const Hosts& hosts = h.hosts;
  const int rank = h.call.rank, host = hosts.host_of(rank), root_host = hosts.host_of(root);
  Levels l{.host = hosts.ranks(host),
           .leader = host == root_host ? hosts.local_of(root) : 0,
           .leaders = {},
           .root_host = root_host,
           .is_leader = false};
  for (int k = 0; k < hosts.count(); ++k) l.leaders.push_back(k == root_host ? root : hosts.ranks(k)[0]);
  l.is_leader = l.leaders[static_cast<size_t>(host)] == rank;
  return l;
}

const hcomm_bufref_t kSend = at(HCOMM_BUF_SEND, 0), kRecv = at(HCOMM_BUF_RECV, 0);

// The host's sums reach the leaders in RECV, the leaders' sum every rank's.
void build_allreduce(const HierCall& h, ScheduleWriter& out) {
  const Call& call = h.call;
  if (call.bytes == 0) return;
  const Levels l = levels(h, 0);
  const uint64_t count = call.args.count;
  int32_t end = Part{.coll = HCOMM_COLL_REDUCE, .ranks = l.host, .count = count, .root = l.leader,
                     .in_place = call.args.in_place != 0, .send = kSend, .recv = kRecv, .id = kHostReduce}
                    .add(call, out);
  if (l.is_leader)
    end = Part{.coll = HCOMM_COLL_ALLREDUCE, .ranks = l.leaders, .count = count, .in_place = true, .send = kRecv,
               .recv = kRecv, .id = kLeaders, .flags = HCOMM_PART_FINISHES, .deps = {end}}
              .add(call, out);
  Part{.coll = HCOMM_COLL_BROADCAST, .ranks = l.host, .count = count, .root = l.leader, .in_place = true,
       .send = kRecv, .recv = kRecv, .id = kHostBroadcast, .flags = HCOMM_PART_LAST, .deps = {end}}
      .add(call, out);
}

// Leaders other than the root sum their host in SCRATCH (no RECV there).
void build_reduce(const HierCall& h, ScheduleWriter& out) {
  check_root(h.call);
  const Call& call = h.call;
  if (call.bytes == 0) return;
  const Levels l = levels(h, call.args.root);
  const bool is_root = call.rank == call.args.root;
  const hcomm_bufref_t acc = is_root ? kRecv : at(HCOMM_BUF_SCRATCH, 0);
  if (l.is_leader && !is_root) out.need_scratch(call.bytes);
  const uint64_t count = call.args.count;
  const int32_t end = Part{.coll = HCOMM_COLL_REDUCE, .ranks = l.host, .count = count, .root = l.leader,
                           .in_place = is_root && call.args.in_place, .send = kSend,
                           .recv = l.is_leader ? acc : kSend, .id = kHostReduce}
                          .add(call, out);
  if (l.is_leader)
    Part{.coll = HCOMM_COLL_REDUCE, .ranks = l.leaders, .count = count, .root = l.root_host, .in_place = is_root,
         .send = acc, .recv = acc, .id = kLeaders, .flags = HCOMM_PART_FINISHES | HCOMM_PART_LAST, .deps = {end}}
        .add(call, out);
}

// The root's two broadcasts only read SEND: the leaders' one in place, the
// host's one copying it to RECV, so both start at once.
void build_broadcast(const HierCall& h, ScheduleWriter& out) {
  check_root(h.call);
  const Call& call = h.call;
  if (call.bytes == 0) return;
  const Levels l = levels(h, call.args.root);
  const bool is_root = call.rank == call.args.root;
  const uint64_t count = call.args.count;
  int32_t end = -1;
  if (l.is_leader)
    end = Part{.coll = HCOMM_COLL_BROADCAST, .ranks = l.leaders, .count = count, .root = l.root_host,
               .in_place = true, .send = is_root ? kSend : kRecv, .recv = is_root ? kSend : kRecv, .id = kLeaders}
              .add(call, out);
  Part{.coll = HCOMM_COLL_BROADCAST, .ranks = l.host, .count = count, .root = l.leader,
       .in_place = !is_root || call.args.in_place, .send = is_root ? kSend : kRecv, .recv = kRecv,
       .id = kHostBroadcast, .flags = HCOMM_PART_LAST, .deps = {is_root ? -1 : end}}
      .add(call, out);
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
