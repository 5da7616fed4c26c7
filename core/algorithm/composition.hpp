// Schedules made of parts: collectives over groups of a communicator's ranks
// (hcomm_coll_part_t) whose steps join the schedule of the whole call. A
// part is built as the group's own communicator would build it, on the
// group's view, then its steps are renamed into the whole: group ranks to
// communicator ranks, its SEND, RECV and SCRATCH to where the part lies,
// its matches into the part's own range, its first steps behind the part's
// dependencies, and a join of its last steps stands for the part.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/exec/schedule.hpp"
#include "hcomm/plugin/algorithm.h"

namespace hcomm::algorithm {

// A group's view of a communicator: its ranks in group order, the hosts
// renumbered by their lowest group rank, no mapped memory (the windows and
// flags belong to the whole communicator), the intra-host link model where
// the group lies on one host.
class GroupView {
 public:
  // Throws HCOMM_ERR_INVALID_ARGUMENT for a rank outside the communicator,
  // a rank named twice, or a group without the view's own rank.
  GroupView(const hcomm_comm_view_t& whole, std::span<const int> ranks);
  GroupView(const GroupView&) = delete;
  GroupView& operator=(const GroupView&) = delete;

  const hcomm_comm_view_t& view() const { return view_; }

 private:
  std::vector<int> node_of_;
  hcomm_comm_view_t view_;
};

// Throws HCOMM_ERR_INVALID_ARGUMENT unless `part` is well formed for a
// schedule of `steps` steps on `whole` (its size, args, group, id, buffers
// and dependencies).
void check_part(const hcomm_coll_part_t& part, const hcomm_comm_view_t& whole, size_t steps);

class Composition {
 public:
  // Appends the steps of `part`, built on its group's view as `built`, to
  // `steps`; returns the index of the step that completes with it.
  int32_t add(std::vector<hcomm_step_t>& steps, const hcomm_coll_part_t& part, const exec::Schedule& built);
  // Places every part's scratch past the algorithm's own `own` bytes and
  // points their references there; returns the scratch the whole needs.
  uint64_t place_scratch(std::vector<hcomm_step_t>& steps, uint64_t own) const;

 private:
  // A SCRATCH reference of a part's step, offset within the part's scratch.
  struct ScratchRef {
    uint32_t step;
    hcomm_bufref_t hcomm_step_t::*field;
    uint32_t part;
  };
  std::vector<ScratchRef> scratch_refs_;
  std::vector<uint64_t> part_scratch_;
};

// A step that completes once all `ends` have: one of them, or empty copies
// that wait for up to HCOMM_STEP_MAX_DEPS each. -1 when `ends` is empty.
int32_t join_steps(std::vector<int32_t> ends, std::vector<hcomm_step_t>& steps);

}  // namespace hcomm::algorithm
