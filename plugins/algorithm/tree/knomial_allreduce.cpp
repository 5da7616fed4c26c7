// K-nomial allreduce for user ops that do not commute (HCOMM_OP_USER_ORDERED):
// a reduce up the tree rooted at rank 0 in rank order, then a broadcast of
// the result down the same tree, each chunk passed on as soon as it is here.
// It serves no other call: for ops that commute, recursive doubling, the
// ring and the double binary tree combine and spread at once.
#include <cmath>
#include <limits>

#include "common/knomial.hpp"
#include "common/services.hpp"
#include "flow.hpp"
#include "knomial_collectives.hpp"

namespace hcomm::algo {

namespace {

// Partial results and the final one in RECV: every rank has one, and a
// rank's partial result has gone up before the final one comes down into it.
void build_allreduce(const Call& call, ScheduleWriter& out, int radix) {
  if (call.args.op != HCOMM_OP_USER_ORDERED)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_UNSUPPORTED, "%s serves user ops that do not commute only", call.algorithm);
  if (call.bytes == 0) return;
  if (call.nranks == 1) return copy_input_to_output(call, out);
  const uint32_t nchunks = out.chunks(call.bytes, call.args.dtype_size);
  const int32_t up = reduce_in_rank_order(call, out, radix, nchunks, at(HCOMM_BUF_RECV, 0), at(HCOMM_BUF_RECV, 0));
  const KnomialTree tree(call.nranks, radix, 0, call.rank);
  const Edges down = {.bytes = call.bytes, .nchunks = nchunks, .match = kDownMatch};
  flow_down(out, down, tree.parent(), tree.children(), at(HCOMM_BUF_RECV, 0), up);
}

// The reduce's cost, then the broadcast's over the same tree.
double allreduce_cost(const CostInput& in, int radix) {
  if (in.op != HCOMM_OP_USER_ORDERED) return std::numeric_limits<double>::infinity();
  const double fan = static_cast<double>(KnomialTree(in.nranks, radix, 0, 0).children().size());
  const hcomm_link_model_t& link = in.link;
  return 2 * KnomialTree::height(in.nranks, radix) * link.alpha_us +
         fan * in.bytes * (2 * link.beta_us_per_byte + link.gamma_us_per_byte);
}

}  // namespace

constinit const KnomialCollective kKnomialOrderedAllreduce = {.coll = HCOMM_COLL_ALLREDUCE,
                                                              .name = "allreduce",
                                                              .build = build_allreduce,
                                                              .cost = allreduce_cost,
                                                              .keeps_rank_order = true};

}  // namespace hcomm::algo
