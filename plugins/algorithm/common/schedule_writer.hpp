// A typed front to the core's schedule builder: steps are plain
// hcomm_step_t values, dependencies are added with the functions below, and a
// step the builder refuses becomes an exception.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>

#include "hcomm/plugin/algorithm.h"

namespace hcomm::algo {

inline hcomm_bufref_t at(hcomm_buffer_t buffer, uint64_t offset) { return {.buffer = buffer, .offset = offset}; }

// Chunk i of `step` waits for chunk i of step `dep` (same chunk count).
void wait_chunkwise(hcomm_step_t& step, int32_t dep);
// Every chunk of `step` waits for all of step `dep`.
void wait_whole(hcomm_step_t& step, int32_t dep);
// One of the two, by `chunkwise`; nothing when dep is -1 (no step).
void wait_for_step(hcomm_step_t& step, int32_t dep, bool chunkwise);

// The builder refused a step and recorded why; the plugin reports its code
// without overwriting that text.
class StepRejected : public std::exception {
 public:
  const char* what() const noexcept override { return "the schedule builder refused a step"; }
};

// The chunks the core cuts a transfer of `bytes` into on the communicator
// `view` (its chunk_bytes), for cost functions; builders ask
// ScheduleWriter::chunks. One on a view from before ABI 1.12, which has no
// chunk size.
uint32_t pipeline_chunks(const hcomm_comm_view_t& view, uint64_t bytes, size_t elem_size);

class ScheduleWriter {
 public:
  explicit ScheduleWriter(hcomm_schedule_builder_t* builder) : builder_(builder) {}

  // Appends `step`; returns its index.
  int32_t add(const hcomm_step_t& step);
  // The chunk count for transfers of up to `bytes`, at least one and at most
  // one per element so that no chunk is empty. It depends only on its
  // arguments and the core's chunk size, so both ends of a transfer agree.
  uint32_t chunks(uint64_t bytes, size_t elem_size);
  // Asks for `bytes` of HCOMM_BUF_SCRATCH (the largest request counts).
  void need_scratch(uint64_t bytes) { builder_->need_scratch(builder_, bytes); }
  // Adds a collective over a group as part of this schedule (ABI 1.13, where
  // the core has it); returns the step that ends this rank's share of it.
  int32_t add_part(const hcomm_coll_part_t& part);

 private:
  hcomm_schedule_builder_t* builder_;
};

}  // namespace hcomm::algo
