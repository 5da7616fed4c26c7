// Steps that recursive doubling and halving-doubling share: the fold of a
// non-power-of-two communicator onto its hypercube (recursive_halving.hpp),
// and the two phases over byte ranges that virtual ranks stand for.
//
// Empty ranges (fewer elements than virtual ranks) still travel, as empty
// messages: every rank then has the same rounds, and each step's
// dependencies are the previous round's steps.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "common/call.hpp"
#include "common/recursive_halving.hpp"
#include "hcomm/plugin/layout.hpp"

namespace hcomm::algo {

// Matches: halving round k uses k, doubling round k kDoublingMatch + k (the
// same pairs meet in both phases), the fold and unfold their own.
constexpr uint32_t kDoublingMatch = 32;
constexpr uint32_t kFoldMatch = 64;
constexpr uint32_t kUnfoldMatch = 65;

// Byte offsets of the parts virtual ranks stand for: part v is
// [bounds[v], bounds[v + 1]), so bounds has size() + 1 entries.
using Bounds = std::vector<uint64_t>;

// The parts of `count` elements cut into one near-equal block per virtual rank.
Bounds element_bounds(const FoldedHypercube& cube, uint64_t count, size_t elem_size);
// The parts of a layout whose blocks lie packed in rank order (allgather,
// reduce_scatter(_v)): virtual rank v stands for the blocks of its ranks.
Bounds rank_bounds(const FoldedHypercube& cube, const plugin::BlockLayout& blocks, int nranks);

// A folded-out rank: sends `sent` bytes of SEND to its partner, then receives
// `returned` bytes of the result into RECV. In place the result overwrites
// the input being sent; it can, as the partner sends the result only after
// it has received all of the input.
void fold_out(const Call& call, ScheduleWriter& out, const FoldedHypercube& cube, uint64_t sent, uint64_t returned);
// A folded-in rank: receives its partner's `bytes` of input and reduces them
// with its own (SEND) into `dst`. Returns the step.
int32_t fold_in_reduce(const Call& call, ScheduleWriter& out, const FoldedHypercube& cube, uint64_t bytes,
                       hcomm_bufref_t dst);
// A folded-in rank hands the result back once the steps `after` are done.
void unfold(const Call& call, ScheduleWriter& out, const FoldedHypercube& cube, hcomm_bufref_t src, uint64_t bytes,
            std::initializer_list<int32_t> after);

// Recursive halving (a reduce-scatter over the parts): in round k a rank
// sends the half of its segment that its partner keeps and receive-reduces
// the half it keeps, reading `input` in round 0 and `work` after, writing
// `work`; the last round's reduction is final and writes `last_dst`. Round
// 0 waits for `produced` (the step that wrote `input`, or -1). Afterwards
// virtual rank v holds part v. Returns the last reduction.
int32_t halve(const Call& call, ScheduleWriter& out, const FoldedHypercube& cube, const Bounds& bounds,
              hcomm_buffer_t input, int32_t produced, hcomm_buffer_t work, hcomm_bufref_t last_dst);

struct Doubled {
  int32_t last_send = -1;
  int32_t last_recv = -1;
};

// Recursive doubling of parts within RECV (an allgather): in round k a rank
// sends its group of 2^k parts and receives its partner's group, matched by
// first_match + k. The first send (this rank's own part) follows step
// `own_part` chunk by chunk (the step that wrote that part, in as many
// chunks; -1 for none) and waits for all of `ready`; round k + 1's send
// waits for round k's send and receive, so it follows every earlier step.
// With `from_send` the own part is this rank's block, sent from SEND while
// a step of `ready` copies it into RECV, which round 1's send waits for.
// After a halving, a receive overwrites the range this rank sent in the
// halving round at the same distance; it can, as the partner sends that
// range only once it has reduced what it received there.
Doubled double_up(const Call& call, ScheduleWriter& out, const FoldedHypercube& cube, const Bounds& bounds,
                  uint32_t first_match, int32_t own_part, std::initializer_list<int32_t> ready,
                  bool from_send = false);

// The link a round's pairs at `distance` use: between hosts if any pair
// spans two, its per-byte cost times the most ranks of one host that send
// across at once (they share the host's network); else within a host. The
// communicator's slowest link when the view has no hosts. fold_link: the
// same for the fold's pairs.
hcomm_link_model_t round_link(const hcomm_comm_view_t& comm, const FoldedHypercube& cube, int64_t distance);
hcomm_link_model_t fold_link(const hcomm_comm_view_t& comm, const FoldedHypercube& cube);

}  // namespace hcomm::algo
