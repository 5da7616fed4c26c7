// K-nomial barrier: empty messages up the tree (a rank reports once its whole
// subtree has), then down from the root (a rank releases its children once
// released), so no rank leaves before every rank has arrived.
#include "common/knomial.hpp"
#include "flow.hpp"
#include "knomial_collectives.hpp"

namespace hcomm::algo {

namespace {

hcomm_step_t empty_message(hcomm_step_kind_t kind, int peer, uint32_t match) {
  return {.kind = kind,
          .peer = peer,
          .match = match,
          .src = at(HCOMM_BUF_SEND, 0),
          .dst = at(HCOMM_BUF_RECV, 0),
          .nchunks = 1};
}

void build_barrier(const Call& call, ScheduleWriter& out, int radix) {
  if (call.nranks == 1) return;
  const KnomialTree tree(call.nranks, radix, 0, call.rank);
  std::vector<int32_t> arrived;
  for (int child : tree.children()) arrived.push_back(out.add(empty_message(HCOMM_STEP_RECV, child, kUpMatch)));
  int32_t released;
  if (tree.is_root()) {
    released = join(out, arrived);
  } else {
    hcomm_step_t report = empty_message(HCOMM_STEP_SEND, tree.parent(), kUpMatch);
    wait_all(out, report, arrived);
    out.add(report);
    released = out.add(empty_message(HCOMM_STEP_RECV, tree.parent(), kDownMatch));
  }
  for (int child : tree.children()) {
    hcomm_step_t release = empty_message(HCOMM_STEP_SEND, child, kDownMatch);
    wait_whole(release, released);
    out.add(release);
  }
}

// ceil(log_k n) latencies up and as many down; a rank's messages to or from
// its children overlap.
double barrier_cost(const CostInput& in, int radix) {
  return 2.0 * KnomialTree::height(in.nranks, radix) * in.link.alpha_us;
}

}  // namespace

constinit const KnomialCollective kKnomialBarrier = {
    .coll = HCOMM_COLL_BARRIER, .name = "barrier", .build = build_barrier, .cost = barrier_cost};

}  // namespace hcomm::algo
