// A schedule as the executor runs it: the steps an algorithm built, checked
// once (buffer bounds, dependencies, chunking) and laid out with the scratch
// each receive-reduce needs. Immutable, so cached and shared between calls.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hcomm/plugin/algorithm.h"

namespace hcomm::exec {

// Chunks of one step that may be in flight at once; also the number of
// scratch slots a receive-reduce step owns.
constexpr uint32_t kMaxInflightChunks = 4;
// Tags carry the chunk index in 16 bits.
constexpr uint32_t kMaxChunks = 1u << 16;

struct Schedule {
  std::string algorithm;
  hcomm_coll_args_t args{};
  std::vector<hcomm_step_t> steps;
  // Per receive-reduce step: where its kMaxInflightChunks staging slots start
  // in scratch, and the bytes of one slot.
  std::vector<uint64_t> staging_offset;
  std::vector<uint64_t> staging_slot;
  uint64_t algorithm_scratch = 0;        // bytes the algorithm asked for, at scratch offset 0
  uint64_t scratch_bytes = 0;            // algorithm scratch + receive-reduce slots

  // Elements [first, first+count) of step s covered by chunk c.
  static void chunk_range(const hcomm_step_t& s, size_t elem_size, uint32_t c, uint64_t* offset, uint64_t* bytes);
};

// Checks the steps against the buffers' sizes and lays out scratch; throws
// HCOMM_ERR_INTERNAL naming the algorithm and the step when a rule is broken.
void finalize_schedule(Schedule& s, uint64_t send_bytes, uint64_t recv_bytes);

}  // namespace hcomm::exec
