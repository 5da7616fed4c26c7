// Mapped-memory steps the direct algorithms share: signals to every peer,
// waits, and the step that reads a rank's data.
#pragma once

#include <cstdint>

#include "common/call.hpp"
#include "common/schedule_writer.hpp"

namespace hcomm::algo {

// SIGNAL(match) to every other rank once step `after` is done (-1: at once),
// with step `flags` (HCOMM_STEP_SEND_READY: the peers may read SEND now).
void signal_all(const Call& call, ScheduleWriter& out, uint32_t match, int32_t after, uint32_t flags = 0);
// WAIT(match) for `peer`'s signal once step `after` is done (-1: at once).
int32_t wait_for(ScheduleWriter& out, int peer, uint32_t match, int32_t after);
// WAITs for every other rank's signal, one after another: the last one
// (returned) is done once all are.
int32_t wait_all(const Call& call, ScheduleWriter& out, uint32_t match, int32_t after);

// A step that reads rank `from`'s `src` into `dst`, or combines it into dst
// (dst = dst op it): a local COPY or REDUCE of this rank's own memory, a LOAD
// or LOAD_REDUCE of a peer's. The caller adds its dependencies.
hcomm_step_t read_step(const Call& call, int from, hcomm_bufref_t src, hcomm_bufref_t dst, uint64_t bytes,
                       uint32_t nchunks, bool combine, bool final);

}  // namespace hcomm::algo
