// Halving-doubling (Rabenseifner): a reduce-scatter by recursive halving,
// then for allreduce an allgather by recursive doubling, each moving (p-1)/p
// of the data in log2 p rounds: bandwidth-optimal with logarithmic latency.
// A non-power-of-two communicator folds onto p ranks first (hypercube.hpp).
#include "common/services.hpp"
#include "hypercube.hpp"
#include "recursive.hpp"

namespace hcomm::algo {

namespace {

// The vector is cut into one part per virtual rank; halving leaves part v
// reduced in RECV at virtual rank v, doubling gathers the parts. The first
// doubling send forwards each chunk of the part as soon as it is reduced,
// as ring's allgather does; waiting for the whole part left it behind ring
// on large messages.
void build_allreduce(const Call& call, ScheduleWriter& out) {
  if (call.bytes == 0) return;
  if (call.nranks == 1) return copy_input_to_output(call, out);
  const FoldedHypercube cube(call.nranks, call.rank);
  if (cube.folded_out()) return fold_out(call, out, cube, call.bytes, call.bytes);
  const int32_t folded = cube.folded_in() ? fold_in_reduce(call, out, cube, call.bytes, at(HCOMM_BUF_RECV, 0)) : -1;
  const Bounds bounds = element_bounds(cube, call.args.count, call.args.dtype_size);
  const int32_t reduced = halve(call, out, cube, bounds, folded >= 0 ? HCOMM_BUF_RECV : HCOMM_BUF_SEND, folded,
                                HCOMM_BUF_RECV, at(HCOMM_BUF_RECV, bounds[cube.vrank()]));
  const Doubled x = double_up(call, out, cube, bounds, kDoublingMatch, reduced, {});
  if (cube.folded_in()) unfold(call, out, cube, at(HCOMM_BUF_RECV, 0), call.bytes, {x.last_send, x.last_recv});
}

// The blocks lie packed in rank order in SEND (reduce_scatter and
// reduce_scatter_v alike); partial sums go to scratch at the same offsets
// where the halving takes more than one round or starts from a fold.
// A rank that stands for its own block alone reduces it into RECV in the last
// round; a folded-in rank reduces both blocks in scratch, then keeps its own
// and sends its partner's back.
void build_reduce_scatter(const Call& call, ScheduleWriter& out) {
  if (call.args.coll == HCOMM_COLL_REDUCE_SCATTER_V && !call.args.recv_counts)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "%s: args->recv_counts is NULL", call.algorithm);
  const plugin::BlockLayout blocks = plugin::BlockLayout::send(call.args, call.nranks);
  const uint64_t total = blocks.total_bytes(), own = blocks.bytes(call.rank);
  if (total == 0) return;
  if (call.nranks == 1) {
    if (!call.args.in_place)
      out.add({.kind = HCOMM_STEP_COPY,
               .src = at(HCOMM_BUF_SEND, 0),
               .dst = at(HCOMM_BUF_RECV, 0),
               .bytes = own,
               .nchunks = 1});
    return;
  }
  const FoldedHypercube cube(call.nranks, call.rank);
  if (cube.folded_out()) return fold_out(call, out, cube, total, own);
  if (cube.rounds() > 1 || cube.folded_in()) out.need_scratch(total);
  const int32_t folded = cube.folded_in() ? fold_in_reduce(call, out, cube, total, at(HCOMM_BUF_SCRATCH, 0)) : -1;
  const Bounds bounds = rank_bounds(cube, blocks, call.nranks);
  const hcomm_bufref_t last_dst =
      cube.folded_in() ? at(HCOMM_BUF_SCRATCH, bounds[cube.vrank()]) : at(HCOMM_BUF_RECV, 0);
  const int32_t reduced = halve(call, out, cube, bounds, folded >= 0 ? HCOMM_BUF_SCRATCH : HCOMM_BUF_SEND, folded,
                                HCOMM_BUF_SCRATCH, last_dst);
  if (!cube.folded_in()) return;
  hcomm_step_t keep = {.kind = HCOMM_STEP_COPY,
                       .src = at(HCOMM_BUF_SCRATCH, blocks.offset(call.rank)),
                       .dst = at(HCOMM_BUF_RECV, 0),
                       .bytes = own,
                       .nchunks = 1};
  wait_whole(keep, reduced);
  out.add(keep);
  const int partner = cube.fold_partner();
  unfold(call, out, cube, at(HCOMM_BUF_SCRATCH, blocks.offset(partner)), blocks.bytes(partner), {reduced});
}

// Halving sends and reduces (p-1)/p of the `bytes` in log2 p rounds (round
// k moves bytes / 2^(k+1) over the link its pairs use), and an allgather by
// doubling sends as much again; a fold costs a message and a reduction of
// the input in, and a message of the `result` out. A lone rank copies unless
// in place.
double cost(const hcomm_comm_view_t& comm, double bytes, double result, bool gathers, bool in_place) {
  if (comm.nranks <= 1) return in_place ? 0.0 : result * comm.link.gamma_us_per_byte;
  const FoldedHypercube cube(comm.nranks, 0);
  double cost = 0, part = bytes;
  for (int k = 0; k < cube.rounds(); ++k) {
    const hcomm_link_model_t l = round_link(comm, cube, cube.halving_distance(k));
    part /= 2;
    cost += (gathers ? 2 : 1) * (l.alpha_us + part * l.beta_us_per_byte) + part * l.gamma_us_per_byte;
  }
  if (cube.size() != comm.nranks) {
    const hcomm_link_model_t f = fold_link(comm, cube);
    cost += 2 * f.alpha_us + bytes * (f.beta_us_per_byte + f.gamma_us_per_byte) + result * f.beta_us_per_byte;
  }
  return cost;
}

double allreduce_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm) {
  const double bytes = static_cast<double>(args->count) * static_cast<double>(args->dtype_size);
  return cost(*comm, bytes, bytes, true, args->in_place);
}

double reduce_scatter_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm) {
  const double block = static_cast<double>(args->count) * static_cast<double>(args->dtype_size);
  return cost(*comm, block * comm->nranks, block, false, args->in_place);
}

// Every rank's blocks together, from this rank's counts, which are every
// rank's: reduce_scatter_v's counts are the same on all ranks.
double reduce_scatter_v_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm) {
  double total = 0;
  for (int r = 0; args->recv_counts && r < comm->nranks; ++r) total += static_cast<double>(args->recv_counts[r]);
  total *= static_cast<double>(args->dtype_size);
  return cost(*comm, total, total / comm->nranks, false, args->in_place);
}

hcomm_result_t allreduce_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                               hcomm_schedule_builder_t* builder) {
  return run_builder("halving_doubling allreduce", HCOMM_COLL_ALLREDUCE, args, comm, builder, build_allreduce);
}

hcomm_result_t reduce_scatter_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                                    hcomm_schedule_builder_t* builder) {
  return run_builder("halving_doubling reduce_scatter", HCOMM_COLL_REDUCE_SCATTER, args, comm, builder,
                     build_reduce_scatter);
}

hcomm_result_t reduce_scatter_v_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                                      hcomm_schedule_builder_t* builder) {
  return run_builder("halving_doubling reduce_scatter_v", HCOMM_COLL_REDUCE_SCATTER_V, args, comm, builder,
                     build_reduce_scatter);
}

}  // namespace

constinit const hcomm_algorithm_desc_t kHalvingDoublingAllreduce =
    any_size_algorithm("halving_doubling", HCOMM_COLL_ALLREDUCE, allreduce_cost, allreduce_build);
constinit const hcomm_algorithm_desc_t kHalvingDoublingReduceScatter =
    any_size_algorithm("halving_doubling", HCOMM_COLL_REDUCE_SCATTER, reduce_scatter_cost, reduce_scatter_build);
constinit const hcomm_algorithm_desc_t kHalvingDoublingReduceScatterV =
    any_size_algorithm("halving_doubling", HCOMM_COLL_REDUCE_SCATTER_V, reduce_scatter_v_cost, reduce_scatter_v_build);

}  // namespace hcomm::algo
