// One running collective on this rank: a schedule bound to the call's buffers
// and sequence number. advance() starts every chunk whose dependencies are
// done and completes those whose messages arrived; it never blocks.
//
// It works from events rather than by scanning the schedule: a step is tried
// when it may have become startable (at the start, when a step it waits for
// completed a chunk, when one of its own chunks completed), and only steps
// with chunks in flight, or a start to retry, are polled. A schedule that may
// run in index order (Schedule::in_order) runs so, with a cursor instead of
// queues. A call costs no allocation: the run's state is kept with the
// schedule for the next run.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/device/reduce.hpp"
#include "core/device/user_op.hpp"
#include "core/exec/mapped_call.hpp"
#include "core/exec/peer_io.hpp"
#include "core/exec/schedule.hpp"

namespace hcomm::exec {

struct Buffers {
  const void* send;
  void* recv;
  void* scratch;  // at least schedule.scratch_bytes
};

// Tags. A communicator's messages carry its tag context (0..kContexts-1),
// so that communicators sharing connections (links::Connections) never
// match each other's messages.
//
// Collectives: [0][seq:12][context:4][signature:7][match:24][chunk:16]. A
// collective's messages carry its call signature (argument_check.hpp), so
// that messages of calls whose ranks passed different arguments never match.
// The signature field all ones is kept for the argument check's messages,
// all ones but the lowest bit for the communicator's service messages.
constexpr int kContexts = 16;
constexpr uint32_t kSeqsInFlight = 1u << 12;
constexpr uint64_t kTagSignatureMask = 0x7F;
constexpr uint64_t collective_tag_base(uint32_t seq, uint64_t signature = 0, int context = 0) {
  const uint64_t low = signature & kTagSignatureMask;
  const uint64_t s = low >= kTagSignatureMask - 1 ? low - 2 : low;  // never the two kept values
  return uint64_t{seq % kSeqsInFlight} << 51 | uint64_t(context & (kContexts - 1)) << 47 | s << 40;
}
// The tag of the argument check's messages (comm/argument_check.hpp).
constexpr uint64_t check_tag(int context) { return uint64_t(context & (kContexts - 1)) << 47 | kTagSignatureMask << 40; }
// The tag of a service message (hcomm_comm_create_group's id) with a user
// tag of 31 bits, in the seq and match fields.
constexpr uint64_t service_tag(int context, uint32_t user_tag) {
  return uint64_t{(user_tag >> 24) & 0x7F} << 51 | uint64_t(context & (kContexts - 1)) << 47 |
         (kTagSignatureMask - 1) << 40 | uint64_t{user_tag & 0xFFFFFF} << 16;
}
// Point to point: [1][user tag:31][context:4][the pair's message number for
// that tag:12][chunk:16]; match is 0. Messages of one tag arrive in order on
// every transport, so the number may wrap.
constexpr uint64_t p2p_tag_base(uint32_t user_tag, uint32_t number, int context = 0) {
  return (uint64_t{1} << 63) | (uint64_t{user_tag & 0x7FFFFFFFu} << 32) | uint64_t(context & (kContexts - 1)) << 28 |
         (uint64_t{number & 0xFFFu} << 16);
}
// Point to point in matching mode (core/p2p) uses the point-to-point space,
// which its communicator uses for nothing else: [1][a:31][context:4][b:12]
// [chunk:16]. An envelope: a is the communicator's stamp (31 bits of its id),
// b all ones, chunk 0. A message's data: a is the sender's number of the
// message to that receiver, b 11 bits of the stamp under a clear top bit.
// The stamp keeps a context's next user on shared connections from matching
// what an earlier one left there (envelope receives left posted, messages
// never received).
constexpr uint64_t envelope_tag(uint64_t stamp, int context = 0) {
  return (uint64_t{1} << 63) | ((stamp & 0x7FFFFFFFu) << 32) | uint64_t(context & (kContexts - 1)) << 28 |
         (uint64_t{0xFFFu} << 16);
}
constexpr uint64_t data_tag_base(uint32_t number, uint64_t stamp, int context = 0) {
  return (uint64_t{1} << 63) | (uint64_t{number & 0x7FFFFFFFu} << 32) | uint64_t(context & (kContexts - 1)) << 28 |
         (((stamp >> 31) & 0x7FFu) << 16);
}

// The state of one run of a schedule (see StatePool).
struct RunState {
  struct Step {
    uint32_t started = 0;
    uint32_t completed = 0;
    bool queued = false;  // in `queue`
    bool polled = false;  // in `polled`
    std::array<void*, kMaxInflightChunks> request{};
  };
  std::vector<Step> steps;
  std::vector<uint8_t> chunk_done;  // by Schedule::chunk_base + chunk
  std::vector<uint32_t> queue;      // steps to try to start, oldest first from queue_head
  size_t queue_head = 0;
  std::vector<uint32_t> polled;     // steps with chunks in flight, or whose start must be retried
  size_t remaining = 0;             // steps not complete
  uint32_t cursor = 0;              // Schedule::in_order: the step that runs next

  void reset(const Schedule& s);
};

class Operation {
 public:
  // Tags of this operation's messages are tag_base | match << 16 | chunk:
  // collective_tag_base(seq) for collectives, p2p_tag_base() for sends and
  // receives, so the two never meet.
  // `signature` is the call's signature (argument_check.hpp), which its
  // mapped signals carry and its waits check.
  // `user_op`: the call's user op, where its schedule stands for one
  // (HCOMM_OP_USER_*); the operation holds it until it is gone.
  Operation(std::shared_ptr<const Schedule> schedule, Buffers buffers, uint32_t seq, uint64_t tag_base, int nranks,
            uint64_t signature = 0, std::shared_ptr<const device::UserOp> user_op = nullptr);
  ~Operation();
  // The same schedule again, as a new call; the last run must be done.
  void restart(Buffers buffers, uint32_t seq, uint64_t tag_base, uint64_t signature = 0,
               std::shared_ptr<const device::UserOp> user_op = nullptr);
  const Schedule* schedule() const { return schedule_.get(); }
  Operation(const Operation&) = delete;
  Operation& operator=(const Operation&) = delete;

  // Returns true once every step is done. Throws the transport's error with
  // the collective, the call and the peer added.
  bool advance(PeerIO& io);
  bool done() const { return state_->remaining == 0; }
  // Chunks completed so far: the caller's deadline restarts when this moves.
  uint64_t events() const { return events_; }
  // The peers this rank still waits on, for timeout messages ("rank 3
  // (receive from), ...") and stall reports (their ranks).
  std::string pending_peers() const;
  // Adds those peers' ranks to `out`, each once.
  void pending_peer_ranks(std::vector<int>& out) const;
  const char* collective() const;
  // "allreduce (call 5, algorithm ring)", to prefix errors with.
  std::string describe() const;
  uint32_t seq() const { return seq_; }

 private:
  // The first unfinished step with each peer that still has one.
  std::vector<const hcomm_step_t*> pending_peer_steps() const;

  enum class Started { kRetry, kInFlight, kDone };

  bool advance_in_order();
  bool run_chunk(uint32_t step);
  bool run_step(uint32_t step);
  bool run_chain(uint32_t first, uint32_t end);
  bool ready(uint32_t step, uint32_t chunk) const;
  Started start(uint32_t step, uint32_t chunk, PeerIO& io);
  void finish(uint32_t step, uint32_t chunk, uint64_t off, uint64_t bytes);
  void compute(const hcomm_step_t& s, uint32_t step, uint32_t chunk, uint64_t off, uint64_t bytes);
  bool try_wait(const hcomm_step_t& s, uint32_t step, uint32_t chunk);
  void run_mapped(const hcomm_step_t& s, uint32_t step, uint32_t chunk, uint64_t off, uint64_t bytes);
  void try_start(uint32_t step, PeerIO& io);
  bool poll(uint32_t step, PeerIO& io);
  void enqueue(uint32_t step);
  void set_polled(uint32_t step);
  uint8_t* staging(uint32_t step, uint32_t chunk) const;
  std::string context(size_t step) const;
  uint8_t* resolve(const hcomm_bufref_t& ref) const;
  uint64_t tag(const hcomm_step_t& s, uint32_t chunk) const;
  template <class F>
  void for_each_pending_peer(F f) const;
  bool chunk_done(uint32_t step, uint32_t chunk) const { return state_->chunk_done[schedule_->chunk_base[step] + chunk]; }

  std::shared_ptr<const Schedule> schedule_;
  const std::vector<hcomm_step_t>& steps_;
  Buffers buffers_;
  uint32_t seq_;
  uint64_t tag_base_;
  int nranks_;
  uint64_t signature_;
  std::shared_ptr<const device::UserOp> user_op_;
  device::Reduction reduction_;  // the schedule's dtype and op, or user_op_
  std::unique_ptr<RunState> state_;
  MappedCall mapped_;
  uint64_t events_ = 0;
};

}  // namespace hcomm::exec
