// Binomial-tree broadcast, pipelined: a rank forwards each chunk to its
// children as soon as the chunk has arrived from its parent.
#include <climits>

#include "common/services.hpp"
#include "tree.hpp"
#include "common/call.hpp"
#include "common/patterns.hpp"

namespace hcomm::algo {

namespace {

// The root sends from SEND (its RECV when in place) and, when not in place,
// also copies its input to its own RECV; every other rank receives into RECV
// and forwards from there.
void build_binomial(const Call& call, ScheduleWriter& out) {
  check_root(call);
  if (call.bytes == 0) return;
  const BinomialTree tree(call.nranks, call.args.root, call.rank);
  if (tree.is_root()) copy_input_to_output(call, out);
  if (call.nranks == 1) return;
  const uint32_t nchunks = out.chunks(call.bytes, call.args.dtype_size);
  int32_t received = -1;
  if (!tree.is_root())
    received = out.add({.kind = HCOMM_STEP_RECV,
                        .peer = tree.parent(),
                        .dst = at(HCOMM_BUF_RECV, 0),
                        .bytes = call.bytes,
                        .nchunks = nchunks});
  for (int child : tree.children()) {
    hcomm_step_t send = {.kind = HCOMM_STEP_SEND,
                         .peer = child,
                         .src = at(tree.is_root() ? HCOMM_BUF_SEND : HCOMM_BUF_RECV, 0),
                         .bytes = call.bytes,
                         .nchunks = nchunks};
    if (!tree.is_root()) wait_chunkwise(send, received);
    out.add(send);
  }
}

// The root sends the whole message once per child, ceil(log2 n) times:
// pipelining hides the depth of the tree, not the root's fan-out.
double binomial_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm) {
  const double bytes = static_cast<double>(args->count) * static_cast<double>(args->dtype_size);
  const hcomm_link_model_t& link = comm->link;
  const double copy = args->in_place ? 0.0 : bytes * link.gamma_us_per_byte;
  return copy + ceil_log2(comm->nranks) * (link.alpha_us + bytes * link.beta_us_per_byte);
}

hcomm_result_t binomial_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                              hcomm_schedule_builder_t* builder) {
  return run_builder("binomial broadcast", HCOMM_COLL_BROADCAST, args, comm, builder, build_binomial);
}

}  // namespace

constinit const hcomm_algorithm_desc_t kBinomialBroadcast = {
    .size = sizeof(hcomm_algorithm_desc_t),
    .name = "binomial",
    .colls = 1u << HCOMM_COLL_BROADCAST,
    .mem_kinds = HCOMM_MEM_HOST | HCOMM_MEM_CUDA,
    .min_bytes = 0,
    .max_bytes = UINT64_MAX,
    .min_ranks = 1,
    .max_ranks = INT_MAX,
    .cost = binomial_cost,
    .build = binomial_build,
};

}  // namespace hcomm::algo
