#include "schedule.hpp"

#include "hcomm/plugin/util.hpp"

namespace hcomm::algo {

void add_ring_pass(const RingPass& pass, const Ring& ring, ScheduleWriter& out) {
  int32_t received = -1;         // the receive of the block sent next
  hcomm_bufref_t received_at{};  // where it wrote
  for (uint32_t t = 0; t < pass.steps; ++t) {
    const int sent = ring.sent_block(t, pass.first);
    if (pass.bytes(sent) > 0) {
      hcomm_step_t send = {.kind = HCOMM_STEP_SEND,
                           .peer = ring.next(),
                           .match = t,
                           .src = t == 0 ? pass.input(sent) : received_at,
                           .bytes = pass.bytes(sent),
                           .nchunks = pass.chunks(sent)};
      if (t > 0) wait_chunkwise(send, received);
      out.add(send);
    }
    const int block = ring.received_block(t, pass.first);
    received = -1;
    if (pass.bytes(block) == 0) continue;
    hcomm_step_t recv = {.kind = HCOMM_STEP_RECV,
                         .peer = ring.prev(),
                         .match = t,
                         .bytes = pass.bytes(block),
                         .nchunks = pass.chunks(block)};
    pass.receive(t, block, recv);
    received = out.add(recv);
    received_at = recv.dst;
  }
}

void copy_unless_in_place(const Call& call, ScheduleWriter& out, hcomm_bufref_t src, hcomm_bufref_t dst,
                          uint64_t bytes) {
  if (call.args.in_place || bytes == 0) return;
  out.add({.kind = HCOMM_STEP_COPY, .src = src, .dst = dst, .bytes = bytes, .nchunks = 1});
}

}  // namespace hcomm::algo
