// A schedule as the executor runs it: the steps an algorithm built, checked
// once (buffer bounds, dependencies, chunking) and laid out with the scratch
// each receive-reduce needs, with what the executor derives from the steps
// (who waits for whom, the order of signals). Immutable once finalised, so
// cached and shared between calls.
#pragma once

#include <bit>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hcomm/plugin/algorithm.h"

namespace hcomm::exec {

// Chunks of one step that may be in flight at once; also the number of
// scratch slots a receive-reduce step owns.
constexpr uint32_t kMaxInflightChunks = 4;
// Tags carry the chunk index in 16 bits.
constexpr uint32_t kMaxChunks = HCOMM_MAX_CHUNKS;

struct RunState;

// The state of one run of a schedule, kept for the next run of the same
// schedule so that a call allocates nothing: one spare. A schedule belongs to
// one communicator, which one thread uses at a time, so the spare needs no
// atomics (they would cost a small call tens of cycles each). A copy starts
// empty.
class StatePool {
 public:
  StatePool() = default;
  StatePool(const StatePool&) {}
  StatePool& operator=(const StatePool&) { return *this; }
  ~StatePool();

  // The spare state, or a new one.
  std::unique_ptr<RunState> take() const;
  void give(std::unique_ptr<RunState> state) const;

 private:
  mutable RunState* spare_ = nullptr;
};

// What every rank must pass alike to a collective, and the algorithm that
// serves it there: the ranks of a call compare it (comm/argument_check.hpp).
struct Agreement {
  int32_t coll = 0, dtype = 0, op = 0, root = 0;
  uint64_t count = 0;
  uint64_t counts = 0;  // a hash of the counts array every rank must agree on; 0 where the call has none
  char algorithm[32] = {};
  uint64_t hash = 0;  // of the fields above
};

struct Schedule {
  std::string algorithm;
  hcomm_coll_args_t args{};
  Agreement agreement;
  std::vector<hcomm_step_t> steps;
  // Per receive-reduce step: where its kMaxInflightChunks staging slots start
  // in scratch, and the bytes of one slot.
  std::vector<uint64_t> staging_offset;
  std::vector<uint64_t> staging_slot;
  uint64_t algorithm_scratch = 0;        // bytes the algorithm asked for, at scratch offset 0
  uint64_t scratch_bytes = 0;            // algorithm scratch + receive-reduce slots
  uint64_t send_bytes = 0, recv_bytes = 0;  // this rank's buffers

  // Steps that wait for step i: dependents[dependents_begin[i] .. dependents_begin[i+1]).
  std::vector<uint32_t> dependents_begin, dependents;
  // Where each step's chunks start among all steps' chunks.
  std::vector<uint32_t> chunk_base;
  uint32_t total_chunks = 0;

  // Mapped memory: the call takes a window half (a mapped step or a WINDOW
  // reference), the bytes of any rank's window that the steps reach, and per
  // SIGNAL or WAIT step the occurrences of its (peer, match) in earlier steps
  // (a signal's chunk c is occurrence signal_base + c + 1 of the call) and,
  // for a SIGNAL, the previous SIGNAL step of that pair (raised in order).
  bool mapped = false;
  uint64_t window_extent = 0;
  uint64_t window_base = UINT64_MAX;  // the lowest window byte the steps reach; UINT64_MAX: none
  std::vector<uint32_t> signal_base;
  std::vector<int32_t> previous_signal;
  // Every step is local or mapped, and every SIGNAL depends, through its
  // dependencies, on every WAIT before it: run one by one in index order, the
  // steps raise each signal as soon as the general executor would, without
  // its queues (the cost of a small call is mostly that bookkeeping).
  bool in_order = false;
  // In order: steps [i, chain_end[i]) run chunk by chunk, each chunk through
  // all of them before the next (their WAITs first), where i starts a chain
  // of data steps with as many chunks, each combining or copying the chunk
  // the step before it made (a chunkwise dependency), as reduce_from_all's
  // steps do: a chunk then stays in cache from one step to the next, where
  // step by step a result larger than the caches would go through memory
  // once per step. chain_end[i] == i + 1 elsewhere.
  std::vector<uint32_t> chain_end;
  // Peers load this rank's SEND: a SIGNAL says so (HCOMM_STEP_SEND_READY).
  // MappedCall::begin then describes it to them, and may offer it a copy in
  // the window, below window_base, or around the window bytes this rank's
  // own steps reach, [own_window_lo, own_window_hi), where no step stores
  // into a window by a peer's reference: peers then load only bytes that the
  // window's owner wrote.
  bool peers_read_send = false;
  uint64_t own_window_lo = UINT64_MAX, own_window_hi = 0;
  bool stores_to_windows = false;
  // A COPY publishes RECV in the window (HCOMM_STEP_PUBLISH): peers that
  // cannot map this rank's RECV read it there.
  bool publishes_recv = false;
  // The call uses a window half: a step names this rank's or a peer's
  // window, or the core may copy SEND into this rank's (peers_read_send).
  // A call that uses none only signals, and may run further ahead of its
  // peers (MappedCall::begin).
  bool uses_halves = false;

  StatePool pool;

  // Elements [first, first+count) of step s covered by chunk c.
  static void chunk_range(const hcomm_step_t& s, size_t elem_size, uint32_t c, uint64_t* offset, uint64_t* bytes);
};

// Elements in `bytes`: a shift for the power-of-two element sizes of every
// built-in dtype, where a division would cost tens of cycles on the
// small-message path; a division for opaque elements of other sizes.
inline uint64_t elements(uint64_t bytes, size_t elem_size) {
  return std::has_single_bit(elem_size) ? bytes >> std::countr_zero(elem_size) : bytes / elem_size;
}

// Checks the steps against the buffers' sizes and lays out scratch; throws
// HCOMM_ERR_INTERNAL naming the algorithm and the step when a rule is broken.
// References to windows and to peers' buffers are checked when they run,
// against the communicator's window and the peers' published buffers.
void finalize_schedule(Schedule& s, uint64_t send_bytes, uint64_t recv_bytes);

}  // namespace hcomm::exec
