#include "flow.hpp"

#include <algorithm>

namespace hcomm::algo {

void flow_down(ScheduleWriter& out, const Edges& edges, int parent, const std::vector<int>& children, hcomm_bufref_t at,
               int32_t after) {
  if (parent >= 0) {
    hcomm_step_t recv = {.kind = HCOMM_STEP_RECV,
                         .peer = parent,
                         .match = edges.match,
                         .dst = at,
                         .bytes = edges.bytes,
                         .nchunks = edges.nchunks};
    if (after >= 0) wait_chunkwise(recv, after);
    after = out.add(recv);
  }
  for (int child : children) {
    hcomm_step_t send = {.kind = HCOMM_STEP_SEND,
                         .peer = child,
                         .match = edges.match,
                         .src = at,
                         .bytes = edges.bytes,
                         .nchunks = edges.nchunks};
    if (after >= 0) wait_chunkwise(send, after);
    out.add(send);
  }
}

int32_t flow_up(ScheduleWriter& out, const Edges& edges, int parent, const std::vector<int>& children,
                hcomm_bufref_t input, hcomm_bufref_t acc) {
  int32_t last = -1;
  for (size_t i = 0; i < children.size(); ++i) {
    hcomm_step_t reduce = {.kind = HCOMM_STEP_RECV_REDUCE,
                           .flags = parent < 0 && i + 1 == children.size() ? uint32_t{HCOMM_STEP_FINAL} : 0u,
                           .peer = children[i],
                           .match = edges.match,
                           .src = last < 0 ? input : acc,
                           .dst = acc,
                           .bytes = edges.bytes,
                           .nchunks = edges.nchunks};
    if (last >= 0) wait_chunkwise(reduce, last);
    last = out.add(reduce);
  }
  if (parent < 0) return last;
  hcomm_step_t send = {.kind = HCOMM_STEP_SEND,
                       .peer = parent,
                       .match = edges.match,
                       .src = last < 0 ? input : acc,
                       .bytes = edges.bytes,
                       .nchunks = edges.nchunks};
  if (last >= 0) wait_chunkwise(send, last);
  return out.add(send);
}

int32_t join(ScheduleWriter& out, const std::vector<int32_t>& deps) {
  if (deps.size() > HCOMM_STEP_MAX_DEPS) {
    std::vector<int32_t> groups;
    for (size_t first = 0; first < deps.size(); first += HCOMM_STEP_MAX_DEPS) {
      const size_t last = std::min(deps.size(), first + HCOMM_STEP_MAX_DEPS);
      groups.push_back(join(out, std::vector<int32_t>(deps.begin() + first, deps.begin() + last)));
    }
    return join(out, groups);
  }
  hcomm_step_t step = {.kind = HCOMM_STEP_COPY,
                       .src = at(HCOMM_BUF_SCRATCH, 0),
                       .dst = at(HCOMM_BUF_SCRATCH, 0),
                       .bytes = 0,
                       .nchunks = 1};
  for (int32_t dep : deps) wait_whole(step, dep);
  return out.add(step);
}

void wait_all(ScheduleWriter& out, hcomm_step_t& step, const std::vector<int32_t>& deps) {
  if (step.ndeps + deps.size() > HCOMM_STEP_MAX_DEPS) return wait_whole(step, join(out, deps));
  for (int32_t dep : deps) wait_whole(step, dep);
}

}  // namespace hcomm::algo
