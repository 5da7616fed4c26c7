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

// An op that does not commute: the tree rooted at rank 0 keeps rank order,
// and rank 0 hands the result to the root (a tree rooted elsewhere would
// start its order at the root).
void build_ordered_reduce(const Call& call, ScheduleWriter& out, int radix) {
  const int root = call.args.root;
  const uint32_t nchunks = out.chunks(call.bytes, call.args.dtype_size);
  const hcomm_bufref_t mine = at(call.rank == root ? HCOMM_BUF_RECV : HCOMM_BUF_SCRATCH, 0);
  const int32_t last = reduce_in_rank_order(call, out, radix, nchunks, mine, at(HCOMM_BUF_SCRATCH, 0));
  if (root == 0) return;
  const Edges edges = {.bytes = call.bytes, .nchunks = nchunks, .match = kDownMatch};
  if (call.rank == 0) flow_down(out, edges, -1, {root}, mine, last);
  if (call.rank == root) flow_down(out, edges, 0, {}, mine, last);
}

void build_reduce(const Call& call, ScheduleWriter& out, int radix) {
  check_root(call);
  if (call.bytes == 0) return;
  if (call.nranks == 1) return copy_input_to_output(call, out);
  if (call.args.op == HCOMM_OP_USER_ORDERED) return build_ordered_reduce(call, out, radix);
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

int32_t reduce_in_rank_order(const Call& call, ScheduleWriter& out, int radix, uint32_t nchunks, hcomm_bufref_t top_acc,
                             hcomm_bufref_t acc) {
  const KnomialTree tree(call.nranks, radix, 0, call.rank);
  std::vector<int> children = tree.children();
  std::sort(children.begin(), children.end());
  const hcomm_bufref_t into = tree.is_root() ? top_acc : acc;
  if (into.buffer == HCOMM_BUF_SCRATCH && !children.empty()) out.need_scratch(into.offset + call.bytes);
  const Edges edges = {.bytes = call.bytes, .nchunks = nchunks, .match = kUpMatch};
  return flow_up(out, edges, tree.parent(), children, at(HCOMM_BUF_SEND, 0), into);
}

constinit const KnomialCollective kKnomialReduce = {
    .coll = HCOMM_COLL_REDUCE, .name = "reduce", .build = build_reduce, .cost = reduce_cost, .keeps_rank_order = true};

}  // namespace hcomm::algo
