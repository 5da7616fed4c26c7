// Allgather and reduce-scatter over the rails: P, the smallest host's rank
// count, rails of counterparts (local rank j of every host, j < P) carry the
// blocks between hosts, block r in rail local(r) mod P, so every host's first
// P ranks use their links to the other hosts at once. Each rail's blocks
// travel packed in SCRATCH, host after host (a Packing), so that every part
// is a flat collective of one contiguous block per rank:
//   allgather: the host's allgatherv (every rank has its host's blocks), the
//     rails' allgatherv of their packed blocks, the host's allgatherv of what
//     its rails brought from the other hosts, unpacked into RECV.
//   reduce-scatter: every block packed, the host's reduce-scatter of each
//     rail's blocks to the rail's member, the rails' reduce-scatter to each
//     host, an alltoallv inside the host that hands each rank its block.
#include "common/blocks.hpp"
#include "cost.hpp"
#include "hcomm/plugin/layout.hpp"
#include "hcomm/plugin/util.hpp"
#include "hierarchical.hpp"

namespace hcomm::algo {

namespace {

enum PartId : uint32_t { kHostFirst, kRails, kHostLast, kPartsPerSegment };

// One segment of the call: piece `segment` of every rank's block, each block
// cut into the same number of pieces (sizes differ by at most an element).
struct Pieces {
  // Per rank: the piece's offset in the call's layout and within its block, its bytes.
  std::vector<uint64_t> at, within, bytes;

  Pieces(const plugin::BlockLayout& blocks, int nranks, size_t es, uint32_t segment, uint32_t nsegments) {
    for (int r = 0; r < nranks; ++r) {
      const BlockPartition cut(blocks.bytes(r) / es, static_cast<int>(nsegments), es);
      within.push_back(cut.offset(static_cast<int>(segment)));
      at.push_back(blocks.offset(r) + within.back());
      bytes.push_back(cut.bytes(static_cast<int>(segment)));
    }
  }
};

// The pieces in SCRATCH by rail, from `base` on: rail j's region holds, host
// after host, the pieces of that host's ranks on rail j (local ranks j, j + P,
// ...). The hosts follow each other from `first` on, so that with the host
// after this rank's first, its own host's pieces close every region.
struct Packing {
  std::vector<uint64_t> at;                  // per rank: its piece's offset
  std::vector<uint64_t> region, region_end;  // per rail
  std::vector<std::vector<uint64_t>> part;   // [rail][host]: where the host's pieces start
  std::vector<std::vector<uint64_t>> bytes;  // [rail][host]: how many bytes they have
  uint64_t end;

  Packing(const Hosts& hosts, const Pieces& pieces, uint64_t base, int first)
      : at(pieces.bytes.size()),
        part(static_cast<size_t>(hosts.min_local()), std::vector<uint64_t>(static_cast<size_t>(hosts.count()))),
        bytes(part),
        end(base) {
    const int rails = hosts.min_local();
    for (int j = 0; j < rails; ++j) {
      region.push_back(end);
      for (int k = 0; k < hosts.count(); ++k) {
        const size_t h = static_cast<size_t>((first + k) % hosts.count());
        part[static_cast<size_t>(j)][h] = end;
        const std::vector<int>& ranks = hosts.ranks(static_cast<int>(h));
        for (size_t l = static_cast<size_t>(j); l < ranks.size(); l += static_cast<size_t>(rails)) {
          at[static_cast<size_t>(ranks[l])] = end;
          end += pieces.bytes[static_cast<size_t>(ranks[l])];
        }
        bytes[static_cast<size_t>(j)][h] = end - part[static_cast<size_t>(j)][h];
      }
      region_end.push_back(end);
    }
  }
  // Rail j's bytes from host h.
  uint64_t part_bytes(int j, int h) const { return bytes[static_cast<size_t>(j)][static_cast<size_t>(h)]; }
};

// This rank's groups.
struct Rails {
  const Hosts& hosts;
  int host, local, count;
  const std::vector<int>& node;

  Rails(const Hosts& h, int rank)
      : hosts(h), host(h.host_of(rank)), local(h.local_of(rank)), count(h.min_local()), node(h.ranks(host)) {}
  bool on_rail() const { return local < count; }
};

hcomm_step_t copy(hcomm_bufref_t src, hcomm_bufref_t dst, uint64_t bytes, int32_t after) {
  hcomm_step_t step = {.kind = HCOMM_STEP_COPY, .src = src, .dst = dst, .bytes = bytes, .nchunks = 1};
  wait_for_step(step, after, false);
  return step;
}

// Per host member: the elements of each rail's region (none from P on),
// less this host's own pieces where `others_only`, and where the regions
// start (from `base`).
void region_layout(const Rails& rails, const Packing& packing, uint64_t base, size_t es, bool others_only,
                   std::vector<size_t>& counts, std::vector<size_t>& displs) {
  counts.assign(rails.node.size(), 0);
  displs.assign(rails.node.size(), (packing.end - base) / es);
  for (int j = 0; j < rails.count; ++j) {
    const size_t k = static_cast<size_t>(j);
    const uint64_t own = others_only ? packing.part_bytes(j, rails.host) : 0;
    counts[k] = (packing.region_end[k] - packing.region[k] - own) / es;
    displs[k] = (packing.region[k] - base) / es;
  }
}

// Per host: the elements of this rank's rail it brings, and where they start
// within the rail's region.
void rail_layout(const Rails& rails, const Packing& packing, size_t es, std::vector<size_t>& counts,
                 std::vector<size_t>& displs) {
  const uint64_t region = packing.region[static_cast<size_t>(rails.local)];
  for (int h = 0; h < rails.hosts.count(); ++h) {
    counts.push_back(packing.part_bytes(rails.local, h) / es);
    displs.push_back((packing.part[static_cast<size_t>(rails.local)][static_cast<size_t>(h)] - region) / es);
  }
}

hcomm_bufref_t scratch(uint64_t offset) { return at(HCOMM_BUF_SCRATCH, offset); }

// Builds `segment(h, pieces, s, base, out)` for each segment of the call's
// `blocks`, as many as hier_ring allreduce cuts a message of their bytes
// into, their packings one after the other in SCRATCH; each returns where
// its packing ends. One segment's rails then run while the next one's host
// part and the previous one's do.
template <class Segment>
void build_in_segments(const HierCall& h, const plugin::BlockLayout& blocks, Segment segment, ScheduleWriter& out) {
  const Call& call = h.call;
  const uint64_t total = blocks.total_bytes();
  if (total == 0) return;
  out.need_scratch(total);
  const uint32_t nsegments = segments_for(out.chunks(total, call.args.dtype_size));
  uint64_t base = 0;
  for (uint32_t s = 0; s < nsegments; ++s)
    base = segment(h, Pieces(blocks, call.nranks, call.args.dtype_size, s, nsegments), s, base, out);
}

// One segment of the allgather, its pieces packed from `base`; returns where
// its packing ends.
uint64_t build_allgather_segment(const HierCall& h, const Pieces& pieces, uint32_t segment, uint64_t base,
                                 ScheduleWriter& out) {
  const Call& call = h.call;
  const size_t es = call.args.dtype_size;
  const Rails rails(h.hosts, call.rank);
  const Packing packing(h.hosts, pieces, base, (rails.host + 1) % h.hosts.count());
  const uint32_t id = segment * kPartsPerSegment;
  std::vector<size_t> counts, displs;
  for (int r : rails.node) {
    counts.push_back(pieces.bytes[static_cast<size_t>(r)] / es);
    displs.push_back(pieces.at[static_cast<size_t>(r)] / es);
  }
  // SEND is this rank's block: its piece lies where it lies in the block.
  const int32_t host_has_all =
      Part{.coll = HCOMM_COLL_ALLGATHERV, .ranks = rails.node, .in_place = call.args.in_place != 0,
           .send = at(HCOMM_BUF_SEND, pieces.within[static_cast<size_t>(call.rank)]), .recv = at(HCOMM_BUF_RECV, 0), .id = id + kHostFirst,
           .recv_counts = &counts, .recv_displs = &displs}
          .add(call, out);

  int32_t rail_done = -1;
  if (rails.on_rail()) {
    std::vector<int32_t> packed;
    for (size_t l = static_cast<size_t>(rails.local); l < rails.node.size(); l += static_cast<size_t>(rails.count)) {
      const size_t r = static_cast<size_t>(rails.node[l]);
      if (pieces.bytes[r])
        packed.push_back(out.add(copy(at(HCOMM_BUF_RECV, pieces.at[r]), scratch(packing.at[r]), pieces.bytes[r],
                                      host_has_all)));
    }
    std::vector<size_t> rail_counts, rail_displs;
    rail_layout(rails, packing, es, rail_counts, rail_displs);
    const std::vector<int> rail = h.hosts.rail(rails.local);
    rail_done = Part{.coll = HCOMM_COLL_ALLGATHERV, .ranks = rail, .in_place = true,
                     .send = scratch(packing.part[static_cast<size_t>(rails.local)][static_cast<size_t>(rails.host)]),
                     .recv = scratch(packing.region[static_cast<size_t>(rails.local)]), .id = id + kRails,
                     .deps = {join(packed, out)}, .recv_counts = &rail_counts, .recv_displs = &rail_displs}
                    .add(call, out);
  }

  // Each rail member's region less this host's pieces, which every rank has.
  region_layout(rails, packing, base, es, true, counts, displs);
  const size_t me = static_cast<size_t>(rails.local);
  const int32_t all_here =
      Part{.coll = HCOMM_COLL_ALLGATHERV, .ranks = rails.node, .in_place = true,
           .send = scratch(base + displs[me] * es), .recv = scratch(base), .id = id + kHostLast,
           .deps = {rail_done}, .recv_counts = &counts, .recv_displs = &displs}
          .add(call, out);
  for (int r = 0; r < call.nranks; ++r) {
    const size_t k = static_cast<size_t>(r);
    if (h.hosts.host_of(r) == rails.host || !pieces.bytes[k]) continue;
    hcomm_step_t unpack = copy(scratch(packing.at[k]), at(HCOMM_BUF_RECV, pieces.at[k]), pieces.bytes[k], all_here);
    unpack.flags = HCOMM_STEP_UNREAD;
    out.add(unpack);
  }
  return packing.end;
}

void build_allgather(const HierCall& h, ScheduleWriter& out) {
  build_in_segments(h, plugin::BlockLayout::recv(h.call.args, h.call.nranks), build_allgather_segment, out);
}

void build_allgatherv(const HierCall& h, ScheduleWriter& out) {
  check_recv_layout(h.call, true);
  build_allgather(h, out);
}

// One segment of the reduce-scatter, its pieces packed from `base`; returns
// where its packing ends. This rank's piece of the result goes to RECV
// (SEND's block rank when in place, whose piece this segment packed first).
uint64_t build_reduce_scatter_segment(const HierCall& h, const Pieces& pieces, uint32_t segment, uint64_t base,
                                      ScheduleWriter& out) {
  const Call& call = h.call;
  const size_t es = call.args.dtype_size;
  const Rails rails(h.hosts, call.rank);
  const Packing packing(h.hosts, pieces, base, 0);
  const uint32_t id = segment * kPartsPerSegment;
  std::vector<int32_t> packed;
  for (size_t r = 0; r < pieces.bytes.size(); ++r)
    if (pieces.bytes[r])
      packed.push_back(out.add(copy(at(HCOMM_BUF_SEND, pieces.at[r]), scratch(packing.at[r]), pieces.bytes[r], -1)));
  std::vector<size_t> counts, displs;
  region_layout(rails, packing, base, es, false, counts, displs);
  const size_t me = static_cast<size_t>(rails.local);
  int32_t end = Part{.coll = HCOMM_COLL_REDUCE_SCATTER_V, .ranks = rails.node, .in_place = true, .send = scratch(base),
                     .recv = scratch(base + displs[me] * es), .id = id + kHostFirst, .deps = {join(packed, out)},
                     .recv_counts = &counts}
                    .add(call, out);

  if (rails.on_rail()) {
    std::vector<size_t> rail_counts, rail_displs;
    rail_layout(rails, packing, es, rail_counts, rail_displs);
    const std::vector<int> rail = h.hosts.rail(rails.local);
    end = Part{.coll = HCOMM_COLL_REDUCE_SCATTER_V, .ranks = rail, .in_place = true,
               .send = scratch(packing.region[me]),
               .recv = scratch(packing.part[me][static_cast<size_t>(rails.host)]), .id = id + kRails,
               .flags = HCOMM_PART_FINISHES, .deps = {end}, .recv_counts = &rail_counts}
              .add(call, out);
  }

  // Rail j's member sends each piece of its rail on this host to its rank.
  const size_t members = rails.node.size();
  std::vector<size_t> send_counts(members, 0), send_displs(members, 0), recv_counts(members, 0),
      recv_displs(members, 0);
  for (size_t l = 0; l < members; ++l) {
    const size_t r = static_cast<size_t>(rails.node[l]);
    if (rails.on_rail() && static_cast<int>(l) % rails.count == rails.local) {
      send_counts[l] = pieces.bytes[r] / es;
      send_displs[l] = (packing.at[r] - base) / es;
    }
  }
  recv_counts[static_cast<size_t>(rails.local % rails.count)] = pieces.bytes[static_cast<size_t>(call.rank)] / es;
  Part{.coll = HCOMM_COLL_ALLTOALLV, .ranks = rails.node, .send = scratch(base),
       .recv = at(HCOMM_BUF_RECV, pieces.within[static_cast<size_t>(call.rank)]), .id = id + kHostLast,
       .flags = HCOMM_PART_LAST, .deps = {end}, .send_counts = &send_counts, .send_displs = &send_displs,
       .recv_counts = &recv_counts, .recv_displs = &recv_displs}
      .add(call, out);
  return packing.end;
}

void build_reduce_scatter(const HierCall& h, ScheduleWriter& out) {
  build_in_segments(h, plugin::BlockLayout::send(h.call.args, h.call.nranks), build_reduce_scatter_segment, out);
}

void build_reduce_scatter_v(const HierCall& h, ScheduleWriter& out) {
  check_recv_layout(h.call, false);
  build_reduce_scatter(h, out);
}

// Between hosts each rail's ring moves about B/P in H - 1 steps of
// ceil(Lmax/P) blocks; inside a host the ring moves every block to P ranks:
// Lmax - 1 steps of B/P in H ceil(Lmax/P) blocks; the hand-over moves one
// block per rank beyond P; packing copies the message once. Reductions add
// gamma to each byte moved.
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
  const double packing = total * in.beta_us_per_byte;
  return ring_level(shape->hosts, per_rail, total / (shape->hosts * rails), ex.alpha_us, ex_byte) +
         ring_level(shape->max_local, shape->hosts * per_rail, total / rails, in.alpha_us, in_byte) + hand_over +
         packing;
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
