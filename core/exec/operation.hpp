// One running collective on this rank: a schedule bound to the call's buffers
// and sequence number. advance() starts every chunk whose dependencies are
// done and completes those whose messages arrived; it never blocks.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/exec/peer_io.hpp"
#include "core/exec/schedule.hpp"

namespace hcomm::exec {

struct Buffers {
  const void* send;
  void* recv;
  void* scratch;  // at least schedule.scratch_bytes
};

// [0][seq:23][match:24][chunk:16]
constexpr uint64_t collective_tag_base(uint32_t seq) { return uint64_t{seq & 0x7FFFFFu} << 40; }
// [1][user tag:31][the pair's message number for that tag:16][chunk:16]; match is 0.
constexpr uint64_t p2p_tag_base(uint32_t user_tag, uint32_t number) {
  return (uint64_t{1} << 63) | (uint64_t{user_tag & 0x7FFFFFFFu} << 32) | (uint64_t{number & 0xFFFFu} << 16);
}

class Operation {
 public:
  // Tags of this operation's messages are tag_base | match << 16 | chunk:
  // collective_tag_base(seq) for collectives, p2p_tag_base() for sends and
  // receives, so the two never meet.
  Operation(std::shared_ptr<const Schedule> schedule, Buffers buffers, uint32_t seq, uint64_t tag_base, int nranks);

  // Returns true once every step is done. Throws the transport's error with
  // the collective, the call and the peer added.
  bool advance(PeerIO& io);
  bool done() const { return first_pending_ == steps_.size(); }
  // Chunks completed so far: the caller's deadline restarts when this moves.
  uint64_t events() const { return events_; }
  // The peers this rank still waits on, for timeout messages.
  std::string pending_peers() const;
  const char* collective() const;
  // "allreduce (call 5, algorithm ring)", to prefix errors with.
  std::string describe() const;
  uint32_t seq() const { return seq_; }

 private:
  struct StepState {
    uint32_t started = 0;
    uint32_t completed = 0;
    std::vector<uint8_t> chunk_done;
    std::array<void*, kMaxInflightChunks> request{};
  };

  bool ready(size_t step, uint32_t chunk) const;
  bool start(size_t step, uint32_t chunk, PeerIO& io);  // false: retry later
  void finish(size_t step, uint32_t chunk);
  uint8_t* staging(size_t step, uint32_t chunk) const;
  std::string context(size_t step) const;
  void advance_step(size_t step, PeerIO& io);
  uint8_t* resolve(const hcomm_bufref_t& ref) const;
  uint64_t tag(const hcomm_step_t& s, uint32_t chunk) const;

  std::shared_ptr<const Schedule> schedule_;
  const std::vector<hcomm_step_t>& steps_;
  Buffers buffers_;
  uint32_t seq_;
  uint64_t tag_base_;
  int nranks_;
  std::vector<StepState> state_;
  size_t first_pending_ = 0;
  uint64_t events_ = 0;
};

}  // namespace hcomm::exec
