// K-nomial broadcast, pipelined: a rank forwards each chunk to its children
// as soon as the chunk has arrived from its parent.
#include "common/knomial.hpp"
#include "flow.hpp"
#include "knomial_collectives.hpp"

namespace hcomm::algo {

namespace {

// The root sends from SEND (its RECV when in place) and, when not in place,
// also copies its input to its own RECV; every other rank receives into RECV
// and forwards from there.
void build_broadcast(const Call& call, ScheduleWriter& out, int radix) {
  check_root(call);
  if (call.bytes == 0) return;
  const KnomialTree tree(call.nranks, radix, call.args.root, call.rank);
  if (tree.is_root()) copy_input_to_output(call, out);
  if (call.nranks == 1) return;
  const Edges edges = {
      .bytes = call.bytes, .nchunks = out.chunks(call.bytes, call.args.dtype_size), .match = kDownMatch};
  flow_down(out, edges, tree.parent(), tree.children(), at(tree.is_root() ? HCOMM_BUF_SEND : HCOMM_BUF_RECV, 0), -1);
}

// A chunk crosses ceil(log_k n) edges; the root, the busiest sender, sends
// the whole message once per child. Sends to a rank's children are posted
// together, so their latencies overlap and their bytes share the link.
double broadcast_cost(const CostInput& in, int radix) {
  const double fanout = static_cast<double>(KnomialTree(in.nranks, radix, 0, 0).children().size());
  return KnomialTree::height(in.nranks, radix) * in.link.alpha_us + fanout * in.bytes * in.link.beta_us_per_byte;
}

}  // namespace

constinit const KnomialCollective kKnomialBroadcast = {
    .coll = HCOMM_COLL_BROADCAST, .name = "broadcast", .build = build_broadcast, .cost = broadcast_cost};

}  // namespace hcomm::algo
