#include "passes.hpp"

namespace hcomm::algo {

std::vector<Placed> add_item_pass(const ItemPass& pass, const Group& group, ScheduleWriter& out) {
  const int m = group.size();
  std::vector<std::vector<size_t>> by_owner(static_cast<size_t>(m));
  for (size_t i = 0; i < pass.items.size(); ++i) by_owner[static_cast<size_t>(pass.items[i].owner)].push_back(i);
  const bool reduce = pass.mode == PassMode::kReduce;
  const Ring ring(m, group.me);
  const int first = reduce ? wrap(int64_t{group.me} - 1, m) : group.me;
  std::vector<Placed> held(pass.items.size());  // where the last receive of each item wrote
  for (int64_t t = 0; t + 1 < m; ++t) {
    for (size_t i : by_owner[static_cast<size_t>(ring.sent_block(t, first))]) {
      const Item& item = pass.items[i];
      if (item.bytes == 0) continue;
      const Placed from = t == 0 ? pass.input(i) : held[i];
      hcomm_step_t send = {.kind = HCOMM_STEP_SEND,
                           .peer = group.rank_at(int64_t{group.me} + 1),
                           .match = match_of(pass.phase, item.id),
                           .src = from.at,
                           .bytes = item.bytes,
                           .nchunks = out.chunks(item.bytes, pass.elem_size)};
      wait_for_step(send, from.step, t > 0);
      out.add(send);
    }
    for (size_t i : by_owner[static_cast<size_t>(ring.received_block(t, first))]) {
      const Item& item = pass.items[i];
      if (item.bytes == 0) continue;
      const bool result = reduce && t + 2 == m;
      hcomm_step_t recv = {.kind = reduce ? HCOMM_STEP_RECV_REDUCE : HCOMM_STEP_RECV,
                           .flags = result && pass.final ? uint32_t{HCOMM_STEP_FINAL} : 0u,
                           .peer = group.rank_at(int64_t{group.me} - 1),
                           .match = match_of(pass.phase, item.id),
                           .dst = pass.output(i, result),
                           .bytes = item.bytes,
                           .nchunks = out.chunks(item.bytes, pass.elem_size)};
      if (reduce) {
        const Placed mine = pass.input(i);
        recv.src = mine.at;
        wait_for_step(recv, mine.step, false);
      }
      held[i] = {out.add(recv), recv.dst};
    }
  }
  std::vector<Placed> placed(pass.items.size());
  for (size_t i = 0; i < pass.items.size(); ++i) {
    const bool owned = pass.items[i].owner == group.me;
    if (owned && (!reduce || m == 1))
      placed[i] = pass.input(i);
    else if (owned || !reduce)
      placed[i] = held[i];
  }
  return placed;
}

Placed add_tree_reduce(const Group& group, int root, const TreeMessage& msg, Placed input, hcomm_bufref_t acc,
                       bool final, ScheduleWriter& out) {
  const BinomialTree tree(group.size(), root, group.me);
  const std::vector<int> children = tree.children();
  Placed value = input;
  // Farthest first is the order the children finish in last: reduce nearest first.
  for (size_t k = children.size(); k-- > 0;) {
    hcomm_step_t recv = {.kind = HCOMM_STEP_RECV_REDUCE,
                         .flags = final && tree.is_root() && k == 0 ? uint32_t{HCOMM_STEP_FINAL} : 0u,
                         .peer = group.rank_at(children[k]),
                         .match = msg.match,
                         .src = value.at,
                         .dst = acc,
                         .bytes = msg.bytes,
                         .nchunks = msg.nchunks};
    wait_for_step(recv, value.step, true);
    value = {out.add(recv), acc};
  }
  if (!tree.is_root()) {
    hcomm_step_t send = {.kind = HCOMM_STEP_SEND,
                         .peer = group.rank_at(tree.parent()),
                         .match = msg.match,
                         .src = value.at,
                         .bytes = msg.bytes,
                         .nchunks = msg.nchunks};
    wait_for_step(send, value.step, true);
    out.add(send);
  }
  return value;
}

Placed add_tree_broadcast(const Group& group, int root, const TreeMessage& msg, Placed input, hcomm_bufref_t dst,
                          ScheduleWriter& out) {
  const BinomialTree tree(group.size(), root, group.me);
  Placed value = input;
  if (!tree.is_root())
    value = {out.add({.kind = HCOMM_STEP_RECV,
                      .peer = group.rank_at(tree.parent()),
                      .match = msg.match,
                      .dst = dst,
                      .bytes = msg.bytes,
                      .nchunks = msg.nchunks}),
             dst};
  for (int child : tree.children()) {
    hcomm_step_t send = {.kind = HCOMM_STEP_SEND,
                         .peer = group.rank_at(child),
                         .match = msg.match,
                         .src = value.at,
                         .bytes = msg.bytes,
                         .nchunks = msg.nchunks};
    wait_for_step(send, value.step, true);
    out.add(send);
  }
  return value;
}

int32_t join(std::vector<int32_t> steps, ScheduleWriter& out) {
  std::erase(steps, -1);
  while (steps.size() > 1) {
    std::vector<int32_t> joined;
    for (size_t first = 0; first < steps.size(); first += HCOMM_STEP_MAX_DEPS) {
      hcomm_step_t copy = {.kind = HCOMM_STEP_COPY,
                           .src = at(HCOMM_BUF_RECV, 0),
                           .dst = at(HCOMM_BUF_RECV, 0),
                           .bytes = 0,
                           .nchunks = 1};
      for (size_t k = first; k < steps.size() && k < first + HCOMM_STEP_MAX_DEPS; ++k) wait_whole(copy, steps[k]);
      joined.push_back(out.add(copy));
    }
    steps = std::move(joined);
  }
  return steps.empty() ? -1 : steps[0];
}

}  // namespace hcomm::algo
