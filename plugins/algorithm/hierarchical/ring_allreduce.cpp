// hier_ring allreduce: a reduce-scatter inside each host, an allreduce of
// each slice between the hosts by the ranks that hold it (one rail of
// counterparts per slice, so every host's links to the others carry data at
// once), and an allgather inside each host. The message is cut into segments
// that run these levels one after the other, so one segment's inter-host
// allreduce overlaps the next one's reduce-scatter and the one before's
// allgather.
#include <algorithm>

#include "common/blocks.hpp"
#include "cost.hpp"
#include "hierarchical.hpp"
#include "passes.hpp"

namespace hcomm::algo {

namespace {

constexpr uint32_t kMaxSegments = 8;
enum Phase : uint32_t { kHostReduceScatter, kRailReduceScatter, kRailAllgather, kHostAllgather };

// One segment. P, the smallest host's rank count, is the number of slices:
// every host has a local rank j for slice j, and rail j (local rank j of
// every host) allreduces it; local ranks from P on of larger hosts take part
// within their host only. Partial sums go to RECV, as in a flat ring
// allreduce; a host of one rank passes its input from SEND to its rail.
void build_segment(const HierCall& h, uint32_t segment, uint64_t base, uint64_t count, ScheduleWriter& out) {
  const Call& call = h.call;
  const Hosts& hosts = h.hosts;
  const size_t es = call.args.dtype_size;
  const int host = hosts.host_of(call.rank), local = hosts.local_of(call.rank);
  const int nhosts = hosts.count(), nslices = hosts.min_local();
  const Group node{hosts.ranks(host), local};
  const BlockPartition slices(count, nslices, es);
  std::vector<Item> slice_items;
  for (int j = 0; j < nslices; ++j)
    slice_items.push_back({.owner = j,
                           .id = segment * static_cast<uint32_t>(nslices) + static_cast<uint32_t>(j),
                           .bytes = slices.bytes(j)});
  auto slice_at = [&](hcomm_buffer_t buffer, size_t j) {
    return at(buffer, base + slices.offset(static_cast<int>(j)));
  };

  const std::vector<Placed> host_sums =
      add_item_pass({.mode = PassMode::kReduce,
                     .phase = kHostReduceScatter,
                     .elem_size = es,
                     .items = slice_items,
                     .input = [&](size_t j) { return Placed{.at = slice_at(HCOMM_BUF_SEND, j)}; },
                     .output = [&](size_t j, bool) { return slice_at(HCOMM_BUF_RECV, j); }},
                    node, out);
  Placed slice = local < nslices ? host_sums[static_cast<size_t>(local)] : Placed{};

  if (local < nslices) {
    const Group rail{hosts.rail(local), host};
    const BlockPartition parts(slices.bytes(local) / es, nhosts, es);
    const uint64_t slice_base = base + slices.offset(local);
    std::vector<Item> part_items;
    for (int k = 0; k < nhosts; ++k)
      part_items.push_back({.owner = k,
                            .id = segment * static_cast<uint32_t>(nhosts) + static_cast<uint32_t>(k),
                            .bytes = parts.bytes(k)});
    auto part_at = [&](size_t k) { return at(HCOMM_BUF_RECV, slice_base + parts.offset(static_cast<int>(k))); };
    const std::vector<Placed> reduced =
        add_item_pass({.mode = PassMode::kReduce,
                       .phase = kRailReduceScatter,
                       .elem_size = es,
                       .items = part_items,
                       .input =
                           [&](size_t k) {
                             return Placed{slice.step, at(static_cast<hcomm_buffer_t>(slice.at.buffer),
                                                          slice.at.offset + parts.offset(static_cast<int>(k)))};
                           },
                       .output = [&](size_t k, bool) { return part_at(k); },
                       .final = true},
                      rail, out);
    const std::vector<Placed> gathered = add_item_pass({.mode = PassMode::kGather,
                                                        .phase = kRailAllgather,
                                                        .elem_size = es,
                                                        .items = part_items,
                                                        .input = [&](size_t k) { return reduced[k]; },
                                                        .output = [&](size_t k, bool) { return part_at(k); }},
                                                       rail, out);
    std::vector<int32_t> writes;
    for (const Placed& p : gathered) writes.push_back(p.step);
    slice = {join(writes, out), at(HCOMM_BUF_RECV, slice_base)};
  }

  add_item_pass({.mode = PassMode::kGather,
                 .phase = kHostAllgather,
                 .elem_size = es,
                 .items = slice_items,
                 .input = [&](size_t) { return slice; },
                 .output = [&](size_t j, bool) { return slice_at(HCOMM_BUF_RECV, j); }},
                node, out);
}

uint32_t segments_for(uint32_t chunks) { return std::min(chunks, kMaxSegments); }

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
