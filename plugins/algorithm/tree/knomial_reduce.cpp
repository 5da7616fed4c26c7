// K-nomial reduce, pipelined: a rank receive-reduces its children's partial
// results one after another, chunk by chunk, and passes each reduced chunk to
// its parent at once. Partial results live in SCRATCH: SEND is the caller's
// and RECV exists at the root only, where the last reduction lands (FINAL).
#include <algorithm>

#include "common/knomial.hpp"
#include "flow.hpp"
#include "knomial_collectives.hpp"

namespace hcomm::algo {

namespace {

void build_reduce(const Call& call, ScheduleWriter& out, int radix) {
  check_root(call);
  if (call.bytes == 0) return;
  if (call.nranks == 1) return copy_input_to_output(call, out);
  const KnomialTree tree(call.nranks, radix, call.args.root, call.rank);
  // Smallest subtrees first: their results are the first to arrive.
  std::vector<int> children = tree.children();
  std::reverse(children.begin(), children.end());
  if (!tree.is_root() && !children.empty()) out.need_scratch(call.bytes);
  const Edges edges = {.bytes = call.bytes, .nchunks = out.chunks(call.bytes, call.args.dtype_size), .match = kUpMatch};
  flow_up(out, edges, tree.parent(), children, at(HCOMM_BUF_SEND, 0),
          at(tree.is_root() ? HCOMM_BUF_RECV : HCOMM_BUF_SCRATCH, 0));
}

// As the broadcast, with the root receiving and reducing the whole message
// once per child.
double reduce_cost(const CostInput& in, int radix) {
  const double fanin = static_cast<double>(KnomialTree(in.nranks, radix, 0, 0).children().size());
  const hcomm_link_model_t& link = in.link;
  return KnomialTree::height(in.nranks, radix) * link.alpha_us +
         fanin * in.bytes * (link.beta_us_per_byte + link.gamma_us_per_byte);
}

}  // namespace

constinit const KnomialCollective kKnomialReduce = {
    .coll = HCOMM_COLL_REDUCE, .name = "reduce", .build = build_reduce, .cost = reduce_cost};

}  // namespace hcomm::algo
