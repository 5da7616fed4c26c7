// K-nomial gather and scatter. Each tree edge carries, in one message, the
// blocks of the subtree below it: virtual ranks [v, v + size), contiguous in
// the rotated order (virtual rank v is rank root + v). Interior ranks
// assemble (gather) or split (scatter) their subtree's message in SCRATCH,
// their own block first. The root's buffer holds the blocks in rank order,
// so a child's blocks are one piece of it, except for the one child whose
// subtree wraps past the last rank: its message goes through SCRATCH and two
// copies. Data moves level by level: a message leaves once all of it is here.
#include <algorithm>

#include "common/knomial.hpp"
#include "flow.hpp"
#include "knomial_collectives.hpp"

namespace hcomm::algo {

namespace {

// The subtree of a child, as one message: at `offset` in its parent's
// message; in the root's buffer (rank order) from the child's block on, of
// which the first `unwrapped` bytes come before the end of the buffer (all
// of them unless the subtree wraps past rank n-1).
struct Subtree {
  uint64_t offset;
  uint64_t bytes;
  uint64_t unwrapped;
};

Subtree subtree(const Call& call, const KnomialTree& parent, int radix, int child) {
  const KnomialTree sub(call.nranks, radix, call.args.root, child);
  const int blocks = sub.subtree_size();
  return {.offset = static_cast<uint64_t>(sub.vrank() - parent.vrank()) * call.bytes,
          .bytes = static_cast<uint64_t>(blocks) * call.bytes,
          .unwrapped = static_cast<uint64_t>(std::min(blocks, call.nranks - child)) * call.bytes};
}

hcomm_step_t copy(hcomm_bufref_t src, hcomm_bufref_t dst, uint64_t bytes) {
  return {.kind = HCOMM_STEP_COPY, .src = src, .dst = dst, .bytes = bytes, .nchunks = 1};
}

// A send from or a receive into `place`, in the chunks both ends agree on.
hcomm_step_t transfer(const Call& call, ScheduleWriter& out, hcomm_step_kind_t kind, int peer, uint32_t match,
                      hcomm_bufref_t place, uint64_t bytes) {
  hcomm_step_t s = {
      .kind = kind, .peer = peer, .match = match, .bytes = bytes, .nchunks = out.chunks(bytes, call.args.dtype_size)};
  (kind == HCOMM_STEP_SEND ? s.src : s.dst) = place;
  return s;
}

// The root's own block moves between SEND and RECV unless in place, where
// it is already there (gather: SEND is RECV's block; scatter: RECV is SEND's).
void copy_own_block(const Call& call, ScheduleWriter& out, bool gather) {
  if (call.args.in_place) return;
  const uint64_t own = static_cast<uint64_t>(call.rank) * call.bytes;
  out.add(copy(at(HCOMM_BUF_SEND, gather ? 0 : own), at(HCOMM_BUF_RECV, gather ? own : 0), call.bytes));
}

void gather_at_root(const Call& call, ScheduleWriter& out, const KnomialTree& tree, int radix) {
  copy_own_block(call, out, true);
  for (int child : tree.children()) {
    const Subtree s = subtree(call, tree, radix, child);
    const uint64_t place = static_cast<uint64_t>(child) * call.bytes;
    if (s.unwrapped == s.bytes) {
      out.add(transfer(call, out, HCOMM_STEP_RECV, child, kUpMatch, at(HCOMM_BUF_RECV, place), s.bytes));
      continue;
    }
    out.need_scratch(s.bytes);
    const int32_t received =
        out.add(transfer(call, out, HCOMM_STEP_RECV, child, kUpMatch, at(HCOMM_BUF_SCRATCH, 0), s.bytes));
    hcomm_step_t to_end = copy(at(HCOMM_BUF_SCRATCH, 0), at(HCOMM_BUF_RECV, place), s.unwrapped);
    hcomm_step_t to_start = copy(at(HCOMM_BUF_SCRATCH, s.unwrapped), at(HCOMM_BUF_RECV, 0), s.bytes - s.unwrapped);
    wait_whole(to_end, received);
    wait_whole(to_start, received);
    out.add(to_end);
    out.add(to_start);
  }
}

void build_gather(const Call& call, ScheduleWriter& out, int radix) {
  check_root(call);
  if (call.bytes == 0) return;
  const KnomialTree tree(call.nranks, radix, call.args.root, call.rank);
  if (tree.is_root()) return gather_at_root(call, out, tree, radix);
  const uint64_t message = static_cast<uint64_t>(tree.subtree_size()) * call.bytes;
  if (tree.subtree_size() == 1) {
    out.add(transfer(call, out, HCOMM_STEP_SEND, tree.parent(), kUpMatch, at(HCOMM_BUF_SEND, 0), message));
    return;
  }
  out.need_scratch(message);
  std::vector<int32_t> parts = {out.add(copy(at(HCOMM_BUF_SEND, 0), at(HCOMM_BUF_SCRATCH, 0), call.bytes))};
  for (int child : tree.children()) {
    const Subtree s = subtree(call, tree, radix, child);
    parts.push_back(
        out.add(transfer(call, out, HCOMM_STEP_RECV, child, kUpMatch, at(HCOMM_BUF_SCRATCH, s.offset), s.bytes)));
  }
  hcomm_step_t up = transfer(call, out, HCOMM_STEP_SEND, tree.parent(), kUpMatch, at(HCOMM_BUF_SCRATCH, 0), message);
  wait_all(out, up, parts);
  out.add(up);
}

void scatter_from_root(const Call& call, ScheduleWriter& out, const KnomialTree& tree, int radix) {
  copy_own_block(call, out, false);
  for (int child : tree.children()) {
    const Subtree s = subtree(call, tree, radix, child);
    const uint64_t place = static_cast<uint64_t>(child) * call.bytes;
    hcomm_step_t down = transfer(call, out, HCOMM_STEP_SEND, child, kDownMatch, at(HCOMM_BUF_SEND, place), s.bytes);
    if (s.unwrapped < s.bytes) {
      out.need_scratch(s.bytes);
      down.src = at(HCOMM_BUF_SCRATCH, 0);
      wait_whole(down, out.add(copy(at(HCOMM_BUF_SEND, place), at(HCOMM_BUF_SCRATCH, 0), s.unwrapped)));
      wait_whole(down, out.add(copy(at(HCOMM_BUF_SEND, 0), at(HCOMM_BUF_SCRATCH, s.unwrapped), s.bytes - s.unwrapped)));
    }
    out.add(down);
  }
}

void build_scatter(const Call& call, ScheduleWriter& out, int radix) {
  check_root(call);
  if (call.bytes == 0) return;
  const KnomialTree tree(call.nranks, radix, call.args.root, call.rank);
  if (tree.is_root()) return scatter_from_root(call, out, tree, radix);
  const uint64_t message = static_cast<uint64_t>(tree.subtree_size()) * call.bytes;
  if (tree.subtree_size() == 1) {
    out.add(transfer(call, out, HCOMM_STEP_RECV, tree.parent(), kDownMatch, at(HCOMM_BUF_RECV, 0), message));
    return;
  }
  out.need_scratch(message);
  const int32_t received =
      out.add(transfer(call, out, HCOMM_STEP_RECV, tree.parent(), kDownMatch, at(HCOMM_BUF_SCRATCH, 0), message));
  hcomm_step_t mine = copy(at(HCOMM_BUF_SCRATCH, 0), at(HCOMM_BUF_RECV, 0), call.bytes);
  wait_whole(mine, received);
  out.add(mine);
  for (int child : tree.children()) {
    const Subtree s = subtree(call, tree, radix, child);
    hcomm_step_t down =
        transfer(call, out, HCOMM_STEP_SEND, child, kDownMatch, at(HCOMM_BUF_SCRATCH, s.offset), s.bytes);
    wait_whole(down, received);
    out.add(down);
  }
}

// Store and forward: a rank sends its subtree's blocks once they are all
// here, so the time is that of the chain from the root down the largest
// subtrees, each rank on it receiving all of its subtree but its own block
// over its one link. Scatter is the same chain run the other way.
double gather_scatter_cost(const CostInput& in, int radix) {
  double t = 0;
  for (KnomialTree tree(in.nranks, radix, 0, 0); tree.subtree_size() > 1;) {
    t += in.link.alpha_us + (tree.subtree_size() - 1) * in.bytes * in.link.beta_us_per_byte;
    int largest = -1, blocks = 0;
    for (int child : tree.children()) {
      const int size = KnomialTree(in.nranks, radix, 0, child).subtree_size();
      if (size > blocks) largest = child, blocks = size;
    }
    tree = KnomialTree(in.nranks, radix, 0, largest);
  }
  return t;
}

}  // namespace

constinit const KnomialCollective kKnomialGather = {
    .coll = HCOMM_COLL_GATHER, .name = "gather", .build = build_gather, .cost = gather_scatter_cost};
constinit const KnomialCollective kKnomialScatter = {
    .coll = HCOMM_COLL_SCATTER, .name = "scatter", .build = build_scatter, .cost = gather_scatter_cost};

}  // namespace hcomm::algo
