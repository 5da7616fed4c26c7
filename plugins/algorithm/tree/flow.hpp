// Steps that move one message along the edges of a tree, shared by the tree
// algorithms: down from the top (broadcast), up with a reduction at every
// rank (reduce), and joins for steps that wait on many others.
#pragma once

#include <cstdint>
#include <vector>

#include "common/schedule_writer.hpp"

namespace hcomm::algo {

// The transfers over one tree's edges: each carries `bytes` in `nchunks`
// chunks under `match`, so both ends of every edge agree.
struct Edges {
  uint64_t bytes;
  uint32_t nchunks;
  uint32_t match;
};

// Unless `parent` is -1, receives the message from the parent into `at`
// (chunk i after chunk i of step `after`, when after >= 0); then sends `at`
// to every child, each chunk as soon as it is here.
void flow_down(ScheduleWriter& out, const Edges& edges, int parent, const std::vector<int>& children, hcomm_bufref_t at,
               int32_t after);

// Receive-reduces the children's messages, in the order given, into `acc`,
// the first one with `input`, each chunk after the same chunk of the one
// before; at the top (parent -1) the last reduction is FINAL. Unless at the
// top, sends the result (`input` itself for a leaf) to the parent. Returns
// the last step: the send, or the top's last reduction (-1 if none).
int32_t flow_up(ScheduleWriter& out, const Edges& edges, int parent, const std::vector<int>& children,
                hcomm_bufref_t input, hcomm_bufref_t acc);

// An empty step that is done once every step in `deps` is; groups of them
// join in a tree of such steps where they are more than one step can name.
int32_t join(ScheduleWriter& out, const std::vector<int32_t>& deps);

// Every chunk of `step` waits for all of each step in `deps` (through a join
// where they are more than `step` has room for).
void wait_all(ScheduleWriter& out, hcomm_step_t& step, const std::vector<int32_t>& deps);

}  // namespace hcomm::algo
