// hier_ring allreduce: a reduce-scatter inside each host, an allreduce of
// each slice between the hosts by the ranks that hold it (one rail of
// counterparts per slice, so every host's links to the others carry data at
// once), and an allgather inside each host, each the collective the selector
// picks for its group. The message is cut into segments that run these
// parts one after the other, so one segment's inter-host allreduce overlaps
// the next one's reduce-scatter and the one before's allgather.
#include <algorithm>

#include "common/blocks.hpp"
#include "cost.hpp"
#include "hierarchical.hpp"

namespace hcomm::algo {

namespace {

enum PartId : uint32_t { kHostReduceScatter, kRailAllreduce, kHostAllgather, kPartsPerSegment };

// One segment of `count` elements at byte `base`. P, the smallest host's
// rank count, is the number of slices: every host has a local rank j for
// slice j, and rail j (local rank j of every host) allreduces it; local ranks
// from P on of larger hosts take part within their host only (slices of no
// elements).
void build_segment(const HierCall& h, uint32_t segment, uint64_t base, uint64_t count, ScheduleWriter& out) {
  const Call& call = h.call;
  const Hosts& hosts = h.hosts;
  const size_t es = call.args.dtype_size;
  const int host = hosts.host_of(call.rank), local = hosts.local_of(call.rank);
  const std::vector<int>& node = hosts.ranks(host);
  const int nslices = hosts.min_local();
  const BlockPartition slices(count, nslices, es);
  std::vector<size_t> counts(node.size()), displs(node.size());
  for (size_t j = 0; j < node.size(); ++j) {
    const int slice = static_cast<int>(std::min<size_t>(j, static_cast<size_t>(nslices)));
    displs[j] = (slice < nslices ? slices.offset(slice) : count * es) / es;
    counts[j] = slice < nslices ? slices.bytes(slice) / es : 0;
  }
  const uint32_t id = segment * kPartsPerSegment;
  const hcomm_bufref_t mine = at(HCOMM_BUF_RECV, base + displs[static_cast<size_t>(local)] * es);
  int32_t end = Part{.coll = HCOMM_COLL_REDUCE_SCATTER_V, .ranks = node, .in_place = call.args.in_place != 0,
                     .send = at(HCOMM_BUF_SEND, base), .recv = mine, .id = id + kHostReduceScatter,
                     .recv_counts = &counts}
                    .add(call, out);
  if (local < nslices) {
    const std::vector<int> rail = hosts.rail(local);
    end = Part{.coll = HCOMM_COLL_ALLREDUCE, .ranks = rail, .count = counts[static_cast<size_t>(local)],
               .in_place = true, .send = mine, .recv = mine, .id = id + kRailAllreduce,
               .flags = HCOMM_PART_FINISHES, .deps = {end}}
              .add(call, out);
  }
  Part{.coll = HCOMM_COLL_ALLGATHERV, .ranks = node, .in_place = true, .send = mine,
       .recv = at(HCOMM_BUF_RECV, base), .id = id + kHostAllgather, .flags = HCOMM_PART_LAST, .deps = {end},
       .recv_counts = &counts, .recv_displs = &displs}
      .add(call, out);
}

void build_hier_ring(const HierCall& h, ScheduleWriter& out) {
  const Call& call = h.call;
  if (call.bytes == 0) return;
  const size_t es = call.args.dtype_size;
  const uint32_t nsegments = segments_for(out.chunks(call.bytes, es));
  const BlockPartition segments(call.args.count, static_cast<int>(nsegments), es);
  for (uint32_t s = 0; s < nsegments; ++s)
    build_segment(h, s, segments.offset(static_cast<int>(s)), segments.bytes(static_cast<int>(s)) / es, out);
}

// Per segment of b bytes: the hosts' reduce-scatter, the rails' allreduce of
// b/P, the hosts' allgather. The segments pipeline through the three levels:
// the sum of one segment's levels plus S - 1 times the slowest level.
double hier_ring_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm) {
  const std::optional<HostShape> shape = host_shape(*comm);
  if (!shape) return declined_cost();
  const uint64_t bytes = args->count * args->dtype_size;
  const uint32_t nsegments = segments_for(pipeline_chunks(*comm, bytes, args->dtype_size));
  const double b = static_cast<double>(bytes) / nsegments, slice = b / shape->min_local;
  const hcomm_link_model_t &in = comm->intra, &ex = comm->inter;
  const double host_rs =
      ring_level(shape->max_local, 1, slice, in.alpha_us, in.beta_us_per_byte + in.gamma_us_per_byte);
  const double part = slice / shape->hosts;
  const double rail = ring_level(shape->hosts, 1, part, ex.alpha_us, ex.beta_us_per_byte + ex.gamma_us_per_byte) +
                      ring_level(shape->hosts, 1, part, ex.alpha_us, ex.beta_us_per_byte);
  const double host_ag = ring_level(shape->max_local, 1, slice, in.alpha_us, in.beta_us_per_byte);
  return host_rs + rail + host_ag + (nsegments - 1) * std::max({host_rs, rail, host_ag});
}

hcomm_result_t hier_ring_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                               hcomm_schedule_builder_t* builder) {
  return run_hierarchical("hier_ring allreduce", HCOMM_COLL_ALLREDUCE, args, comm, builder, build_hier_ring);
}

}  // namespace

constinit const hcomm_algorithm_desc_t kHierRingAllreduce =
    any_size_algorithm("hier_ring", HCOMM_COLL_ALLREDUCE, hier_ring_cost, hier_ring_build, kMaxRanks);

}  // namespace hcomm::algo
