// The mapped-memory part of one running operation: its place among the
// communicator's mapped calls (one at a time, in call order), the half of
// every window it uses, the buffers it exposes to its peers, and the mapped
// steps themselves (loads, stores, signals, waits).
#pragma once

#include <cstdint>

#include "core/device/reduce.hpp"
#include "core/exec/mapped_io.hpp"
#include "core/exec/schedule.hpp"

namespace hcomm::exec {

struct Buffers;

class MappedCall {
 public:
  // A SEND or RECV that peers cannot map is copied into the window for them
  // (SEND by the core, RECV by the steps' HCOMM_STEP_PUBLISH copies) below
  // this many bytes; from it on they copy it by address. The copy into the
  // window and the peers' loads from it are two passes over the data where
  // cross-memory attach makes one, and from about here the extra pass costs
  // more than the system call saves.
  static constexpr uint64_t kWindowCopiesBelow = 1 << 20;

  MappedCall() = default;
  // A call that did not end (its operation failed) lets the next one begin.
  ~MappedCall();
  MappedCall(const MappedCall&) = delete;
  MappedCall& operator=(const MappedCall&) = delete;

  // Takes the communicator's next mapped call, once the previous one ended
  // and every rank finished the one before it (which read this call's half),
  // and publishes this rank's buffers. False: not yet, try again.
  // `signature` is the call's (argument_check.hpp): its signals carry it and
  // its waits compare it with the peer's.
  bool begin(MappedIO* io, const Schedule& schedule, const Buffers& buffers, uint64_t signature);
  // The call's steps are all done.
  void end();
  bool running() const { return running_; }
  // Peers read this rank's RECV in place (mapped, or by address): its
  // HCOMM_STEP_PUBLISH copies are skipped.
  bool recv_in_place() const { return recv_in_place_; }

  // This rank's half of its window for this call.
  uint8_t* window() const { return io_->half(io_->rank(), call_); }

  // dst = the peer's `src` (bytes at offset `offset` of the step's reference).
  void load(int peer, const hcomm_bufref_t& src, uint64_t offset, uint8_t* dst, uint64_t bytes);
  // dst = src op the peer's `src2`; divisor and stores as device::reduce's.
  void load_reduce(int peer, const hcomm_bufref_t& src2, uint64_t offset, uint8_t* dst, const uint8_t* src,
                   uint64_t bytes, const device::Reduction& reduction, int divisor, device::Stores stores);
  // The peer's `dst` = src.
  void store(int peer, const hcomm_bufref_t& dst, uint64_t offset, const uint8_t* src, uint64_t bytes);
  // Raises occurrence `occurrence` (from 1) of this call's flag `match` in
  // the peer's window, with `bytes` of `payload` in the flag's line.
  void signal(int peer, uint32_t match, uint64_t occurrence, const uint8_t* payload = nullptr, uint64_t bytes = 0);
  // True once the peer raised that occurrence of flag `match` in this rank's
  // window; then copies the `bytes` of payload the signal carried. A signal
  // of a call whose signature differs is never taken: the wait stays false
  // and MappedIO::Calls::mismatched names the peer.
  bool wait(int peer, uint32_t match, uint64_t occurrence, uint8_t* payload = nullptr, uint64_t bytes = 0);

 private:
  // [address, address + bytes) of a peer's memory, of which [lo, hi) is
  // mapped here at `mapped` (for lo); the rest is copied by address.
  struct Span {
    int peer;
    uint64_t address, bytes;
    const uint8_t* mapped;
    uint64_t lo, hi;
    bool evict;  // the mapped part, once read (device/evict.hpp)
  };
  Span remote(int peer, const hcomm_bufref_t& ref, uint64_t offset, uint64_t bytes);
  const MappedIO::Calls::PeerBuffer& peer_buffer(int peer, uint32_t buffer);
  void check_peer(int peer) const {
    if (static_cast<unsigned>(peer) >= static_cast<unsigned>(io_->nranks())) [[unlikely]] bad_peer(peer);
  }
  [[noreturn]] void bad_peer(int peer) const;

  MappedIO* io_ = nullptr;
  const Buffers* own_ = nullptr;
  const Schedule* schedule_ = nullptr;
  uint64_t call_ = 0;
  uint64_t signature_ = 0;
  bool begun_ = false;    // holds the communicator's mapped-call turn
  bool running_ = false;  // and has published its buffers
  bool recv_in_place_ = false;
};

}  // namespace hcomm::exec
