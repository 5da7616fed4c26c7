#include "schedule_writer.hpp"

#include <algorithm>
#include <cstddef>

#include "hcomm/plugin/util.hpp"

namespace hcomm::algo {

namespace {

// A step named twice is waited for once, wholly if either asks so.
void add_dep(hcomm_step_t& step, int32_t dep, bool whole) {
  for (uint32_t d = 0; d < step.ndeps; ++d)
    if (step.deps[d] == dep) {
      if (whole) step.whole_deps |= 1u << d;
      return;
    }
  if (step.ndeps == HCOMM_STEP_MAX_DEPS)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INTERNAL, "a step may wait for at most %d steps", HCOMM_STEP_MAX_DEPS);
  if (whole) step.whole_deps |= 1u << step.ndeps;
  step.deps[step.ndeps++] = dep;
}

}  // namespace

void wait_chunkwise(hcomm_step_t& step, int32_t dep) { add_dep(step, dep, false); }
void wait_whole(hcomm_step_t& step, int32_t dep) { add_dep(step, dep, true); }

void wait_for_step(hcomm_step_t& step, int32_t dep, bool chunkwise) {
  if (dep >= 0) add_dep(step, dep, !chunkwise);
}

uint32_t pipeline_chunks(const hcomm_comm_view_t& view, uint64_t bytes, size_t elem_size) {
  const bool has_chunk_bytes = view.size >= offsetof(hcomm_comm_view_t, chunk_bytes) + sizeof view.chunk_bytes;
  return hcomm_chunk_count(bytes, elem_size, has_chunk_bytes ? view.chunk_bytes : 0);
}

int32_t ScheduleWriter::add(const hcomm_step_t& step) {
  int32_t index = builder_->add(builder_, &step);
  if (index < 0) throw StepRejected();
  return index;
}

int32_t ScheduleWriter::add_part(const hcomm_coll_part_t& part) {
  int32_t index = builder_->add_coll(builder_, &part);
  if (index < 0) throw StepRejected();
  return index;
}

uint32_t ScheduleWriter::chunks(uint64_t bytes, size_t elem_size) {
  uint64_t elements = elem_size ? bytes / elem_size : 0;
  uint64_t asked = builder_->chunks_for(builder_, bytes, elem_size);
  return static_cast<uint32_t>(std::clamp<uint64_t>(asked, 1, std::max<uint64_t>(elements, 1)));
}

}  // namespace hcomm::algo
