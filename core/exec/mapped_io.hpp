// What the mapped-memory steps need from the communication layer: every
// rank's window mapped into this process, peers' exposed buffers (mapped when
// they can be, copied by address when not), and the bookkeeping of this
// communicator's mapped calls. The communicator's links implement it over a
// transport that maps memory; tests implement it in one process.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/exec/window.hpp"

namespace hcomm::exec {

class MappedIO {
 public:
  virtual ~MappedIO() = default;
  MappedIO(const MappedIO&) = delete;
  MappedIO& operator=(const MappedIO&) = delete;

  // Where desc.address of `peer`'s memory lies in this process (mapped on
  // first use and kept). Throws when it cannot be mapped.
  virtual const uint8_t* map(int peer, const hcomm_mem_desc_t& desc) = 0;
  // One copy from or into `peer`'s memory at `address` of its address space.
  virtual void read(int peer, uint64_t address, void* local, size_t bytes) = 0;
  virtual void write(int peer, uint64_t address, const void* local, size_t bytes) = 0;
  // The part of this rank's [ptr, ptr + bytes) that peers can map
  // (hcomm_mem_alloc'd or registered memory); out->bytes 0 when none.
  virtual void describe(const void* ptr, size_t bytes, hcomm_mem_desc_t* out) = 0;

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  // Bytes of each half that every rank's window has.
  uint64_t window_bytes() const { return window_bytes_; }
  window::Header& header(int r) const { return *reinterpret_cast<window::Header*>(ranks_[r].base); }
  // The line of mapped call `call` of flag `match` of `owner`'s window, raised by `writer`.
  window::FlagLine& flag(int owner, int writer, uint32_t match, uint64_t call) const {
    return *reinterpret_cast<window::FlagLine*>(ranks_[owner].base +
                                                layout_.flag_offset(writer, match, window::lap_of(call)));
  }
  // Rank r's half for mapped call `call`.
  uint8_t* half(int r, uint64_t call) const { return ranks_[r].half[call & 1]; }
  // Whether `peer` lies under another last-level cache than this rank (off
  // unless set): its SEND, read in place, is then evicted from the caches
  // after reading (device/evict.hpp), and large stores into its memory go
  // past them (device::copy_past_caches), for it to read from memory.
  bool caches_apart(int peer) const { return ranks_[peer].caches_apart; }
  void set_caches_apart(int peer, bool apart) { ranks_[peer].caches_apart = apart; }

  // Sleeps until what the running mapped call waits for may have happened,
  // up to timeout_us; returns at once when no mapped call is waiting.
  void sleep(int64_t timeout_us);
  // Looks at what the running mapped call waits for, up to `looks` times;
  // true once it happened. A signal is then seen a cache-line transfer after
  // it is raised, not a round of the progress loop later.
  bool spin(int looks) const;
  // Records the CPU this rank waits on; true when a peer last waited on the
  // same one. Two spinning ranks the scheduler keeps on one CPU stay there
  // (each is always runnable and cache-hot); one that sleeps instead is
  // placed anew when it wakes, on an idle CPU if there is one.
  bool shares_cpu();

  // The mapped calls of this communicator, kept by the executor.
  struct Calls {
    uint64_t begun = 0;  // mapped calls begun so far; the running one is number `begun`
    bool busy = false;   // a mapped call runs: the next one waits (calls run one at a time, in order)
    // Per rank: the last mapped call it is known to have finished.
    std::vector<uint64_t> finished;
    // What the running call waits for (sleep), or null.
    const std::atomic<uint64_t>* awaited = nullptr;
    uint64_t awaited_value = 0;
    // A peer whose signal carried another call signature than the running
    // call's (its arguments differ), or -1.
    int mismatched = -1;
    // Per rank and buffer (SEND, RECV): the exposed buffer as resolved for one call.
    struct PeerBuffer {
      uint64_t call = 0;
      uint64_t address = 0, bytes = 0;
      const uint8_t* mapped = nullptr;  // where [lo, hi) of the peer's memory lies here
      uint64_t lo = 0, hi = 0;
      uint64_t hole_lo = 0, hole_hi = 0;  // but for these bytes
      bool evict = false;  // the peer's own SEND, mapped, where caches_apart(peer): evicted after reading
    };
    std::vector<std::array<PeerBuffer, 2>> buffers;
    // Where data read by address is reduced from, when it may not land in place.
    std::vector<uint8_t> staging;
  };
  Calls& calls() { return calls_; }

 protected:
  MappedIO(int rank, int nranks, uint64_t window_bytes);
  // Rank r's window, mapped here at `base`, with halves of `bytes` (its own
  // HCOMM_WINDOW_BYTES; window_bytes() is the smallest of them).
  void attach(int r, uint8_t* base, uint64_t bytes);

 private:
  struct Rank {
    uint8_t* base = nullptr;
    std::array<uint8_t*, 2> half{};
    bool caches_apart = false;
  };

  int rank_, nranks_;
  uint64_t window_bytes_;
  window::Layout layout_;
  std::vector<Rank> ranks_;
  Calls calls_;
};

}  // namespace hcomm::exec
