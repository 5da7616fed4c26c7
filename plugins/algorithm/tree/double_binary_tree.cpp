// The double binary tree algorithms (common/double_binary_tree.hpp): the
// message is cut in two halves, each of which flows through one of the two
// trees, pipelined in chunks. Every rank has at most two children over both
// trees, so it sends and receives at most the whole message (two halves) in
// each direction.
//
// allreduce is NCCL's Tree algorithm: each half is reduced up its tree to the
// tree's top, whose last reduction is FINAL, and broadcast back down; a rank
// passes chunk i on as soon as it has it, so the way down starts while the
// way up is still running. broadcast and reduce use the rooted pair, whose
// trees hang below the call's root.
#include "common/double_binary_tree.hpp"

#include "common/blocks.hpp"
#include "common/call.hpp"
#include "common/patterns.hpp"
#include "flow.hpp"
#include "tree.hpp"

namespace hcomm::algo {

namespace {

constexpr int kTrees[] = {0, 1};

// Tree t's half of the message, and its transfers each way.
struct Half {
  uint64_t offset;
  uint64_t bytes;
  Edges up, down;
};

Half half(const Call& call, ScheduleWriter& out, int tree) {
  const BlockPartition halves(call.args.count, 2, call.args.dtype_size);
  const uint64_t bytes = halves.bytes(tree);
  const uint32_t nchunks = out.chunks(bytes, call.args.dtype_size);
  const uint32_t match = 2 * static_cast<uint32_t>(tree);
  return {.offset = halves.offset(tree),
          .bytes = bytes,
          .up = {.bytes = bytes, .nchunks = nchunks, .match = match},
          .down = {.bytes = bytes, .nchunks = nchunks, .match = match + 1}};
}

// Partial results go to RECV, the output: a rank receives the final half
// into it only after it has sent its partial result up (chunk by chunk).
void build_allreduce(const Call& call, ScheduleWriter& out) {
  if (call.bytes == 0) return;
  if (call.nranks == 1) return copy_input_to_output(call, out);
  const DoubleBinaryTree trees(call.nranks, call.rank);
  for (int t : kTrees) {
    const Half h = half(call, out, t);
    if (h.bytes == 0) continue;
    const int32_t reduced = flow_up(out, h.up, trees.parent(t), trees.children(t), at(HCOMM_BUF_SEND, h.offset),
                                    at(HCOMM_BUF_RECV, h.offset));
    flow_down(out, h.down, trees.parent(t), trees.children(t), at(HCOMM_BUF_RECV, h.offset), reduced);
  }
}

void build_broadcast(const Call& call, ScheduleWriter& out) {
  check_root(call);
  if (call.bytes == 0) return;
  const bool is_root = call.rank == call.args.root;
  if (is_root) copy_input_to_output(call, out);
  const DoubleBinaryTree trees = DoubleBinaryTree::rooted(call.nranks, call.args.root, call.rank);
  for (int t : kTrees) {
    const Half h = half(call, out, t);
    if (h.bytes == 0) continue;
    flow_down(out, h.down, trees.parent(t), trees.children(t), at(is_root ? HCOMM_BUF_SEND : HCOMM_BUF_RECV, h.offset),
              -1);
  }
}

// Partial results go to SCRATCH (RECV exists at the root only).
void build_reduce(const Call& call, ScheduleWriter& out) {
  check_root(call);
  if (call.bytes == 0) return;
  if (call.nranks == 1) return copy_input_to_output(call, out);
  const bool is_root = call.rank == call.args.root;
  const DoubleBinaryTree trees = DoubleBinaryTree::rooted(call.nranks, call.args.root, call.rank);
  for (int t : kTrees) {
    const Half h = half(call, out, t);
    const std::vector<int> children = trees.children(t);
    if (h.bytes == 0) continue;
    if (!is_root && !children.empty()) out.need_scratch(h.offset + h.bytes);
    flow_up(out, h.up, trees.parent(t), children, at(HCOMM_BUF_SEND, h.offset),
            at(is_root ? HCOMM_BUF_RECV : HCOMM_BUF_SCRATCH, h.offset));
  }
}

// Costs: a chunk crosses each tree's depth once per direction; the busiest
// rank sends (and receives) the whole message once per direction, two
// halves, and reduces up to two halves.
double bytes_of(const hcomm_coll_args_t* args) {
  return static_cast<double>(args->count) * static_cast<double>(args->dtype_size);
}

// The rooted trees' depth: one edge from the root, then ceil(log2(n - 1)).
int rooted_depth(int nranks) { return nranks > 1 ? 1 + ceil_log2(nranks - 1) : 0; }

double allreduce_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm) {
  const hcomm_link_model_t& link = comm->link;
  const double bytes = bytes_of(args);
  if (comm->nranks <= 1) return 0.0;
  return 2.0 * ceil_log2(comm->nranks) * link.alpha_us + 2.0 * bytes * link.beta_us_per_byte +
         bytes * link.gamma_us_per_byte;
}

double broadcast_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm) {
  return rooted_depth(comm->nranks) * comm->link.alpha_us + bytes_of(args) * comm->link.beta_us_per_byte;
}

double reduce_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm) {
  const hcomm_link_model_t& link = comm->link;
  return rooted_depth(comm->nranks) * link.alpha_us + bytes_of(args) * (link.beta_us_per_byte + link.gamma_us_per_byte);
}

hcomm_result_t allreduce_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                               hcomm_schedule_builder_t* builder) {
  return run_builder("double_binary_tree allreduce", HCOMM_COLL_ALLREDUCE, args, comm, builder, build_allreduce);
}

hcomm_result_t broadcast_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                               hcomm_schedule_builder_t* builder) {
  return run_builder("double_binary_tree broadcast", HCOMM_COLL_BROADCAST, args, comm, builder, build_broadcast);
}

hcomm_result_t reduce_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                            hcomm_schedule_builder_t* builder) {
  return run_builder("double_binary_tree reduce", HCOMM_COLL_REDUCE, args, comm, builder, build_reduce);
}

}  // namespace

const std::vector<hcomm_algorithm_desc_t>& double_binary_tree_algorithms() {
  static const std::vector<hcomm_algorithm_desc_t> all = {
      any_size_algorithm("double_binary_tree", HCOMM_COLL_ALLREDUCE, allreduce_cost, allreduce_build),
      any_size_algorithm("double_binary_tree", HCOMM_COLL_BROADCAST, broadcast_cost, broadcast_build),
      any_size_algorithm("double_binary_tree", HCOMM_COLL_REDUCE, reduce_cost, reduce_build),
  };
  return all;
}

}  // namespace hcomm::algo
