// The pieces the ring schedules are made of: a pass of blocks around the
// ring, and the ring cut open into a chain.
#pragma once

#include <cstdint>
#include <functional>

#include "common/call.hpp"
#include "common/patterns.hpp"
#include "common/schedule_writer.hpp"

namespace hcomm::algo {

// Blocks passed around the ring one hop per step (patterns.hpp's Ring): at
// step t this rank sends block sent_block(t, first) to next() and receives
// block received_block(t, first) from prev(), the block it sends at step
// t + 1. A forward waits chunk-wise for the receive of its block and reads
// what that receive wrote, so each chunk moves on as soon as it is here.
// Transfers are matched by t; blocks without bytes have none, on both ends.
struct RingPass {
  uint32_t steps;
  int first;
  std::function<uint64_t(int block)> bytes;
  // A block's chunk count, the same on every rank.
  std::function<uint32_t(int block)> chunks;
  // Where the send of step 0 reads its block.
  std::function<hcomm_bufref_t(int block)> input;
  // Completes the receive of `block` at `step`, which comes as a RECV with
  // peer, match, bytes and chunks set: its kind, src, dst and flags.
  std::function<void(uint32_t step, int block, hcomm_step_t& recv)> receive;
};

void add_ring_pass(const RingPass& pass, const Ring& ring, ScheduleWriter& out);

// The ring cut open before `head`: head sends to head + 1, and so on to
// head - 1, the tail.
class Chain {
 public:
  Chain(int nranks, int head, int rank)
      : ring_(nranks, rank), position_(wrap(int64_t{rank} - head, nranks)), nranks_(nranks) {}

  bool is_head() const { return position_ == 0; }
  bool is_tail() const { return position_ == nranks_ - 1; }
  int prev() const { return ring_.prev(); }
  int next() const { return ring_.next(); }

 private:
  Ring ring_;
  int position_;
  int nranks_;
};

// A copy of `bytes` from src to dst, left out when in place (the input is
// then already where it goes) or empty.
void copy_unless_in_place(const Call& call, ScheduleWriter& out, hcomm_bufref_t src, hcomm_bufref_t dst,
                          uint64_t bytes);

}  // namespace hcomm::algo
