#include "mapped_steps.hpp"

namespace hcomm::algo {

void signal_all(const Call& call, ScheduleWriter& out, uint32_t match, int32_t after, uint32_t flags) {
  for (int p = 0; p < call.nranks; ++p) {
    if (p == call.rank) continue;
    hcomm_step_t s = {.kind = HCOMM_STEP_SIGNAL, .flags = flags, .peer = p, .match = match, .nchunks = 1};
    if (after >= 0) wait_whole(s, after);
    out.add(s);
  }
}

int32_t wait_for(ScheduleWriter& out, int peer, uint32_t match, int32_t after) {
  hcomm_step_t s = {.kind = HCOMM_STEP_WAIT, .peer = peer, .match = match, .nchunks = 1};
  if (after >= 0) wait_whole(s, after);
  return out.add(s);
}

int32_t wait_all(const Call& call, ScheduleWriter& out, uint32_t match, int32_t after) {
  int32_t last = after;
  for (int p = 0; p < call.nranks; ++p)
    if (p != call.rank) last = wait_for(out, p, match, last);
  return last;
}

hcomm_step_t read_step(const Call& call, int from, hcomm_bufref_t src, hcomm_bufref_t dst, uint64_t bytes,
                       uint32_t nchunks, bool combine, bool final) {
  const bool own = from == call.rank;
  hcomm_step_t s = {.flags = final ? static_cast<uint32_t>(HCOMM_STEP_FINAL) : 0u,
                    .peer = from,
                    .dst = dst,
                    .bytes = bytes,
                    .nchunks = nchunks};
  if (combine) {
    s.kind = own ? HCOMM_STEP_REDUCE : HCOMM_STEP_LOAD_REDUCE;
    s.src = dst;
    s.src2 = src;
  } else {
    s.kind = own ? HCOMM_STEP_COPY : HCOMM_STEP_LOAD;
    s.src = src;
  }
  return s;
}

}  // namespace hcomm::algo
