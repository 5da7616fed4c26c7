// Recursive doubling: log2 p rounds in which partners exchange all they hold,
// the fewest messages for a latency-bound call. A non-power-of-two
// communicator folds onto p ranks first and unfolds after (the allreduce:
// doubling.hpp; the allgather: hypercube.hpp).
#include "doubling.hpp"
#include "common/services.hpp"
#include "hypercube.hpp"
#include "recursive.hpp"

namespace hcomm::algo {

namespace {

void build_allreduce(const Call& call, ScheduleWriter& out) {
  if (call.bytes == 0) return;
  if (call.nranks == 1) return copy_input_to_output(call, out);
  add_doubling_allreduce(call, Group::all(call), {.first_round = 0, .fold = kFoldMatch, .unfold = kUnfoldMatch},
                         {.at = at(HCOMM_BUF_SEND, 0)}, at(HCOMM_BUF_RECV, 0), true, out);
}

// Blocks travel in RECV: a rank places its own block, a folded-in rank also
// its partner's, then round k exchanges groups of 2^k virtual ranks' blocks.
// Round 0 sends a rank's own block from SEND while the copy places it, as
// ring does: sending it after the copy is slower.
void build_allgather(const Call& call, ScheduleWriter& out) {
  if (call.bytes == 0) return;
  const FoldedHypercube cube(call.nranks, call.rank);
  const plugin::BlockLayout blocks = plugin::BlockLayout::recv(call.args, call.nranks);
  const uint64_t total = blocks.total_bytes();
  if (cube.folded_out()) return fold_out(call, out, cube, call.bytes, total);
  int32_t placed = -1;
  if (!call.args.in_place)
    placed = out.add({.kind = HCOMM_STEP_COPY,
                      .src = at(HCOMM_BUF_SEND, 0),
                      .dst = at(HCOMM_BUF_RECV, blocks.offset(call.rank)),
                      .bytes = call.bytes,
                      .nchunks = 1});
  int32_t folded = -1;
  if (cube.folded_in())
    folded = out.add({.kind = HCOMM_STEP_RECV,
                      .peer = cube.fold_partner(),
                      .match = kFoldMatch,
                      .dst = at(HCOMM_BUF_RECV, blocks.offset(cube.fold_partner())),
                      .bytes = call.bytes,
                      .nchunks = out.chunks(call.bytes, call.args.dtype_size)});
  const Doubled x = double_up(call, out, cube, rank_bounds(cube, blocks, call.nranks), 0, -1, {placed, folded},
                              !call.args.in_place && !cube.folded_in());
  if (cube.folded_in()) unfold(call, out, cube, at(HCOMM_BUF_RECV, 0), total, {x.last_send, x.last_recv});
}

// log2 p rounds of the whole message, sent and reduced, each over the link
// its pairs use; a fold costs a message each way and a reduction more. A
// lone rank copies unless in place.
double allreduce_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm) {
  const double bytes = static_cast<double>(args->count) * static_cast<double>(args->dtype_size);
  if (comm->nranks <= 1) return args->in_place ? 0.0 : bytes * comm->link.gamma_us_per_byte;
  const FoldedHypercube cube(comm->nranks, 0);
  auto round = [&](const hcomm_link_model_t& l) {
    return l.alpha_us + bytes * (l.beta_us_per_byte + l.gamma_us_per_byte);
  };
  double cost = 0;
  for (int k = 0; k < cube.rounds(); ++k) cost += round(round_link(*comm, cube, FoldedHypercube::doubling_distance(k)));
  if (cube.size() != comm->nranks) {
    const hcomm_link_model_t f = fold_link(*comm, cube);
    cost += round(f) + f.alpha_us + bytes * f.beta_us_per_byte;
  }
  return cost;
}

// log2 p rounds that together move (p-1)/p of the result, round k 2^k/p of
// it over the link its pairs use; a fold sends one block in and the whole
// result back.
double allgather_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm) {
  const double block = static_cast<double>(args->count) * static_cast<double>(args->dtype_size);
  if (comm->nranks <= 1) return args->in_place ? 0.0 : block * comm->link.gamma_us_per_byte;
  const FoldedHypercube cube(comm->nranks, 0);
  const double total = block * comm->nranks;
  double cost = 0, part = total / cube.size();
  for (int k = 0; k < cube.rounds(); ++k, part *= 2) {
    const hcomm_link_model_t l = round_link(*comm, cube, FoldedHypercube::doubling_distance(k));
    cost += l.alpha_us + part * l.beta_us_per_byte;
  }
  if (cube.size() != comm->nranks) {
    const hcomm_link_model_t f = fold_link(*comm, cube);
    cost += 2 * f.alpha_us + (block + total) * f.beta_us_per_byte;
  }
  return cost;
}

hcomm_result_t allreduce_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                               hcomm_schedule_builder_t* builder) {
  return run_builder("recursive_doubling allreduce", HCOMM_COLL_ALLREDUCE, args, comm, builder, build_allreduce);
}

hcomm_result_t allgather_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                               hcomm_schedule_builder_t* builder) {
  return run_builder("recursive_doubling allgather", HCOMM_COLL_ALLGATHER, args, comm, builder, build_allgather);
}

}  // namespace

constinit const hcomm_algorithm_desc_t kRecursiveDoublingAllreduce =
    any_size_algorithm("recursive_doubling", HCOMM_COLL_ALLREDUCE, allreduce_cost, allreduce_build);
constinit const hcomm_algorithm_desc_t kRecursiveDoublingAllgather =
    any_size_algorithm("recursive_doubling", HCOMM_COLL_ALLGATHER, allgather_cost, allgather_build);

}  // namespace hcomm::algo
