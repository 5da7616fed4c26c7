// Allgather and reduce-scatter over the rails: P, the smallest host's rank
// count, rails of counterparts (local rank i of every host, i < P) carry the
// blocks between hosts, block r in rail local(r) mod P of each host, so every
// host's first P ranks use their links to the other hosts at once. A rank
// from P on of a larger host hands its block to (allgather) or gets it from
// (reduce-scatter) local rank local(r) mod P of its host, its rail's member.
//   allgather: hand-over, the rails' ring allgather of their blocks, the
//     hosts' ring allgather where rank i < P holds the blocks of rail i.
//   reduce-scatter: the hosts' ring reduce-scatter of every block to its
//     rail's member, the rails' ring reduce-scatter to the block's host,
//     hand-over.
#include "cost.hpp"
#include "hcomm/plugin/layout.hpp"
#include "hcomm/plugin/util.hpp"
#include "hierarchical.hpp"
#include "passes.hpp"

namespace hcomm::algo {

namespace {

enum Phase : uint32_t { kHandOver, kRails, kHost };

// The rails and this rank's place on them.
struct Rails {
  const Hosts& hosts;
  int host, local, count;

  Rails(const Hosts& h, int rank) : hosts(h), host(h.host_of(rank)), local(h.local_of(rank)), count(h.min_local()) {}
  int rail_of(int rank) const { return hosts.local_of(rank) % count; }
  // This rank's host's member of rank r's rail.
  int member_for(int rank) const { return hosts.ranks(host)[static_cast<size_t>(rail_of(rank))]; }
  bool on_rail() const { return local < count; }
  Group host_group() const { return {hosts.ranks(host), local}; }
  Group rail() const { return {hosts.rail(local), host}; }
};

// The blocks of `rail` that the rails' ring moves, one item per block, owned
// by its host; and every block as an item of the host ring, owned by its
// rail's member.
std::vector<Item> rail_items(const Rails& rails, const plugin::BlockLayout& blocks, std::vector<int>& ranks_of) {
  std::vector<Item> items;
  for (int k = 0; k < rails.hosts.count(); ++k)
    for (int r : rails.hosts.ranks(k))
      if (rails.rail_of(r) == rails.local) {
        items.push_back({.owner = k, .id = static_cast<uint32_t>(r), .bytes = blocks.bytes(r)});
        ranks_of.push_back(r);
      }
  return items;
}
std::vector<Item> host_items(const Rails& rails, const plugin::BlockLayout& blocks, int nranks) {
  std::vector<Item> items;
  for (int r = 0; r < nranks; ++r)
    items.push_back({.owner = rails.rail_of(r), .id = static_cast<uint32_t>(r), .bytes = blocks.bytes(r)});
  return items;
}

// where[r]: where block r lies at this rank once here. A rank's own block is
// in SEND (RECV's block when in place); a rank from P on gets it back from
// the host ring, the others copy it unless in place.
void build_allgather(const HierCall& h, ScheduleWriter& out) {
  const Call& call = h.call;
  const size_t es = call.args.dtype_size;
  const int n = call.nranks;
  const plugin::BlockLayout blocks = plugin::BlockLayout::recv(call.args, n);
  const Rails rails(h.hosts, call.rank);
  auto recv_at = [&](int r) { return at(HCOMM_BUF_RECV, blocks.offset(r)); };
  std::vector<Placed> where(static_cast<size_t>(n));
  where[static_cast<size_t>(call.rank)] = {.at = at(HCOMM_BUF_SEND, 0)};
  if (rails.on_rail() && !call.args.in_place && blocks.bytes(call.rank) > 0)
    out.add({.kind = HCOMM_STEP_COPY,
             .src = at(HCOMM_BUF_SEND, 0),
             .dst = recv_at(call.rank),
             .bytes = blocks.bytes(call.rank),
             .nchunks = 1});

  for (int r : h.hosts.ranks(rails.host)) {
    if (h.hosts.local_of(r) < rails.count || blocks.bytes(r) == 0) continue;
    const hcomm_step_t step = {.match = match_of(kHandOver, static_cast<uint32_t>(r)),
                               .bytes = blocks.bytes(r),
                               .nchunks = out.chunks(blocks.bytes(r), es)};
    if (r == call.rank) {
      hcomm_step_t send = step;
      send.kind = HCOMM_STEP_SEND, send.peer = rails.member_for(r), send.src = at(HCOMM_BUF_SEND, 0);
      out.add(send);
    } else if (rails.member_for(r) == call.rank) {
      hcomm_step_t recv = step;
      recv.kind = HCOMM_STEP_RECV, recv.peer = r, recv.dst = recv_at(r);
      where[static_cast<size_t>(r)] = {out.add(recv), recv.dst};
    }
  }

  if (rails.on_rail()) {
    std::vector<int> ranks_of;
    const std::vector<Item> items = rail_items(rails, blocks, ranks_of);
    const std::vector<Placed> placed =
        add_item_pass({.mode = PassMode::kGather,
                       .phase = kRails,
                       .elem_size = es,
                       .items = items,
                       .input = [&](size_t i) { return where[static_cast<size_t>(ranks_of[i])]; },
                       .output = [&](size_t i, bool) { return recv_at(ranks_of[i]); }},
                      rails.rail(), out);
    for (size_t i = 0; i < items.size(); ++i)
      if (items[i].owner != rails.host) where[static_cast<size_t>(ranks_of[i])] = placed[i];
  }

  add_item_pass({.mode = PassMode::kGather,
                 .phase = kHost,
                 .elem_size = es,
                 .items = host_items(rails, blocks, n),
                 .input = [&](size_t r) { return where[r]; },
                 .output = [&](size_t r, bool) { return recv_at(static_cast<int>(r)); }},
                rails.host_group(), out);
}

void build_allgatherv(const HierCall& h, ScheduleWriter& out) {
  check_recv_layout(h.call, true);
  build_allgather(h, out);
}

// where[r]: this rank's partial sum of block r: its input in SEND, then
// what the host ring reduced to it. Partial sums go to SCRATCH, one slot per
// block received; results for this rank go to RECV (SEND's block rank when
// in place, read only by the reductions that precede them).
void build_reduce_scatter(const HierCall& h, ScheduleWriter& out) {
  const Call& call = h.call;
  const size_t es = call.args.dtype_size;
  const int n = call.nranks;
  const plugin::BlockLayout blocks = plugin::BlockLayout::send(call.args, n);
  const Rails rails(h.hosts, call.rank);
  uint64_t slots = 0;
  auto partial_or_mine = [&](int r, bool result) {
    if (result && r == call.rank) return at(HCOMM_BUF_RECV, 0);
    const hcomm_bufref_t slot = at(HCOMM_BUF_SCRATCH, slots);
    slots += blocks.bytes(r);
    return slot;
  };
  std::vector<Placed> where(static_cast<size_t>(n));
  const std::vector<Item> items = host_items(rails, blocks, n);
  const std::vector<Placed> host_sums = add_item_pass(
      {.mode = PassMode::kReduce,
       .phase = kHost,
       .elem_size = es,
       .items = items,
       .input = [&](size_t r) { return Placed{.at = at(HCOMM_BUF_SEND, blocks.offset(static_cast<int>(r)))}; },
       .output = [&](size_t r, bool) { return partial_or_mine(static_cast<int>(r), false); }},
      rails.host_group(), out);
  for (size_t r = 0; r < items.size(); ++r)
    if (items[r].owner == rails.local) where[r] = host_sums[r];

  if (rails.on_rail()) {
    std::vector<int> ranks_of;
    const std::vector<Item> rail = rail_items(rails, blocks, ranks_of);
    const std::vector<Placed> sums =
        add_item_pass({.mode = PassMode::kReduce,
                       .phase = kRails,
                       .elem_size = es,
                       .items = rail,
                       .input = [&](size_t i) { return where[static_cast<size_t>(ranks_of[i])]; },
                       .output = [&](size_t i, bool result) { return partial_or_mine(ranks_of[i], result); },
                       .final = true},
                      rails.rail(), out);
    for (size_t i = 0; i < rail.size(); ++i)
      if (rail[i].owner == rails.host) where[static_cast<size_t>(ranks_of[i])] = sums[i];
  }

  for (int r : h.hosts.ranks(rails.host)) {
    if (h.hosts.local_of(r) < rails.count || blocks.bytes(r) == 0) continue;
    const hcomm_step_t step = {.match = match_of(kHandOver, static_cast<uint32_t>(r)),
                               .bytes = blocks.bytes(r),
                               .nchunks = out.chunks(blocks.bytes(r), es)};
    if (r == call.rank) {
      hcomm_step_t recv = step;
      recv.kind = HCOMM_STEP_RECV, recv.peer = rails.member_for(r), recv.dst = at(HCOMM_BUF_RECV, 0);
      out.add(recv);
    } else if (rails.member_for(r) == call.rank) {
      const Placed& sum = where[static_cast<size_t>(r)];
      hcomm_step_t send = step;
      send.kind = HCOMM_STEP_SEND, send.peer = r, send.src = sum.at;
      if (sum.step >= 0) wait_whole(send, sum.step);
      out.add(send);
    }
  }
  if (slots > 0) out.need_scratch(slots);
}

void build_reduce_scatter_v(const HierCall& h, ScheduleWriter& out) {
  check_recv_layout(h.call, false);
  build_reduce_scatter(h, out);
}

// Between hosts each rail's ring moves about B/P in H - 1 steps of
// ceil(Lmax/P) blocks; inside a host the ring moves every block to P ranks:
// Lmax - 1 steps of B/P in H ceil(Lmax/P) blocks; the hand-over moves one
// block per rank beyond P. Reductions add gamma to each byte moved.
double rails_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm, bool reduces) {
  const std::optional<HostShape> shape = host_shape(*comm);
  if (!shape) return declined_cost();
  const plugin::BlockLayout blocks =
      reduces ? plugin::BlockLayout::send(*args, comm->nranks) : plugin::BlockLayout::recv(*args, comm->nranks);
  const double total = static_cast<double>(blocks.total_bytes()), rails = shape->min_local;
  const double per_rail = (shape->max_local + shape->min_local - 1) / shape->min_local;  // ceil(Lmax/P)
  const hcomm_link_model_t &in = comm->intra, &ex = comm->inter;
  const double in_byte = in.beta_us_per_byte + (reduces ? in.gamma_us_per_byte : 0);
  const double ex_byte = ex.beta_us_per_byte + (reduces ? ex.gamma_us_per_byte : 0);
  const double hand_over = shape->max_local > shape->min_local
                               ? (per_rail - 1) * (in.alpha_us + in.beta_us_per_byte * blocks.max_bytes())
                               : 0.0;
  return ring_level(shape->hosts, per_rail, total / (shape->hosts * rails), ex.alpha_us, ex_byte) +
         ring_level(shape->max_local, shape->hosts * per_rail, total / rails, in.alpha_us, in_byte) + hand_over;
}

double allgather_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm) {
  return rails_cost(args, comm, false);
}
double reduce_scatter_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm) {
  return rails_cost(args, comm, true);
}

hcomm_result_t allgather_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                               hcomm_schedule_builder_t* builder) {
  return run_hierarchical("hier_ring allgather", HCOMM_COLL_ALLGATHER, args, comm, builder, build_allgather);
}
hcomm_result_t allgatherv_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                                hcomm_schedule_builder_t* builder) {
  return run_hierarchical("hier_ring allgatherv", HCOMM_COLL_ALLGATHERV, args, comm, builder, build_allgatherv);
}
hcomm_result_t reduce_scatter_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                                    hcomm_schedule_builder_t* builder) {
  return run_hierarchical("hier_ring reduce_scatter", HCOMM_COLL_REDUCE_SCATTER, args, comm, builder,
                          build_reduce_scatter);
}
hcomm_result_t reduce_scatter_v_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                                      hcomm_schedule_builder_t* builder) {
  return run_hierarchical("hier_ring reduce_scatter_v", HCOMM_COLL_REDUCE_SCATTER_V, args, comm, builder,
                          build_reduce_scatter_v);
}

}  // namespace

constinit const hcomm_algorithm_desc_t kHierAllgather =
    any_size_algorithm("hier_ring", HCOMM_COLL_ALLGATHER, allgather_cost, allgather_build, kMaxRanks);
constinit const hcomm_algorithm_desc_t kHierAllgatherv =
    any_size_algorithm("hier_ring", HCOMM_COLL_ALLGATHERV, allgather_cost, allgatherv_build, kMaxRanks);
constinit const hcomm_algorithm_desc_t kHierReduceScatter =
    any_size_algorithm("hier_ring", HCOMM_COLL_REDUCE_SCATTER, reduce_scatter_cost, reduce_scatter_build, kMaxRanks);
constinit const hcomm_algorithm_desc_t kHierReduceScatterV =
    any_size_algorithm("hier_ring", HCOMM_COLL_REDUCE_SCATTER_V, reduce_scatter_cost, reduce_scatter_v_build, kMaxRanks);

}  // namespace hcomm::algo
