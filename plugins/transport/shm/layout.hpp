// What lives in a rank's shared segment, and the packets its FIFOs carry.
//
// A segment belongs to one receiving rank (its owner): a header, then one
// FIFO per sending peer. A sender claims a FIFO when it attaches and is its
// only producer; the owner is its only consumer. Everything that more than one
// process writes is a lock-free std::atomic, so the same code is correct
// between threads and between processes.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace hcomm::shm {

inline constexpr size_t kCacheLine = 64;
inline constexpr size_t kPage = 4096;
inline constexpr uint64_t kSegmentMagic = 0x4d48534d4d4f4348ull;  // "HCOMMSHM"
inline constexpr uint32_t kLayoutVersion = 1;

static_assert(std::atomic<uint32_t>::is_always_lock_free && std::atomic<uint64_t>::is_always_lock_free,
              "atomics shared between processes must be lock-free");

constexpr uint64_t align_up(uint64_t n, uint64_t to) { return (n + to - 1) / to * to; }

enum class SlotState : uint32_t { Free = 0, Attached = 1, Closed = 2 };

// Whether a FIFO's sender may read the owner's memory with process_vm_readv.
enum class CmaState : uint32_t { Unknown = 0, Permitted = 1, Denied = 2 };

// Control block of one FIFO. head and tail count bytes ever written and read
// (they never wrap); each sits on its own cache line so that the producer and
// the consumer do not share one. Stores that make work for the other side are
// seq_cst, for the doorbell (doorbell.hpp).
struct FifoControl {
  alignas(kCacheLine) std::atomic<uint64_t> head;  // written by the producer only
  alignas(kCacheLine) std::atomic<uint64_t> tail;  // written by the consumer only
  // Set once by the producer when it attaches, read by the owner.
  alignas(kCacheLine) std::atomic<uint32_t> producer_state;  // SlotState
  std::atomic<int32_t> producer_rank;
  std::atomic<int32_t> producer_pid;
  std::atomic<uint32_t> producer_cma;  // CmaState: may the producer read the owner's memory
  std::atomic<uint64_t> producer_check;
  // The owner closed its endpoint: whatever the producer still sends is lost.
  std::atomic<uint32_t> consumer_closed;
  // The producer has sends waiting for room: the consumer rings its doorbell
  // when it frees some.
  std::atomic<uint32_t> producer_blocked;
};

struct SegmentHeader {
  std::atomic<uint64_t> magic;  // stored last, with release, once the rest is written
  uint32_t version;
  int32_t owner_rank;
  int32_t owner_pid;
  uint32_t fifo_count;
  uint64_t fifo_bytes;
  uint64_t key_check;
  alignas(kCacheLine) std::atomic<uint32_t> fifos_claimed;
  // Futex word: bumped by whoever made work for a sleeping owner.
  alignas(kCacheLine) std::atomic<uint32_t> doorbell;
  // The owner announced it is about to block on the doorbell.
  alignas(kCacheLine) std::atomic<uint32_t> sleeping;
};

// Where things are inside a segment of `fifo_count` FIFOs of `fifo_bytes` each.
struct Geometry {
  uint32_t fifo_count;
  uint64_t fifo_bytes;

  static constexpr uint64_t controls_offset() { return align_up(sizeof(SegmentHeader), kCacheLine); }
  uint64_t control_offset(uint32_t i) const { return controls_offset() + uint64_t{i} * sizeof(FifoControl); }
  uint64_t data_offset(uint32_t i) const { return align_up(control_offset(fifo_count), kPage) + i * fifo_bytes; }
  uint64_t total_bytes() const { return data_offset(fifo_count); }
};

enum class PacketType : uint32_t {
  Pad = 1,         // fills the end of the ring; skipped
  Eager = 2,       // first piece of a message, carried in the FIFO
  Fragment = 3,    // next piece of the message being streamed
  Rendezvous = 4,  // a message left in the sender's memory, to be read with CMA
  Ack = 5,         // the receiver has read a rendezvous message
};

// Every packet starts with this header, on a cache-line boundary.
struct PacketHeader {
  PacketType type;
  uint32_t payload_bytes;  // bytes that follow the header in this packet
  uint64_t tag;            // Eager, Rendezvous
  uint64_t length;         // Eager, Rendezvous: the whole message; Ack: errno of the read (0 = done)
  uint64_t cookie;         // Rendezvous, Ack: names the send on the sender's side
};
static_assert(sizeof(PacketHeader) == 32);

// The payload of a Rendezvous packet.
struct RendezvousPayload {
  uint64_t address;  // the message in the sender's address space
};

// The largest message a peer may send (the transport's max_message): a
// packet that announces a longer one breaks the protocol.
inline constexpr uint64_t kMaxMessage = PTRDIFF_MAX;

// A packet is at most one slot; a FIFO holds kSlotsPerFifo slots at least.
inline constexpr uint64_t kSlotsPerFifo = 16;

// The largest packet a ring of `capacity` bytes carries.
inline uint64_t max_packet_bytes(uint64_t capacity) { return capacity / kSlotsPerFifo / kCacheLine * kCacheLine; }
inline uint64_t packet_bytes(uint64_t payload_bytes) {
  return align_up(sizeof(PacketHeader) + payload_bytes, kCacheLine);
}
inline std::byte* payload_of(PacketHeader* h) { return reinterpret_cast<std::byte*>(h) + sizeof(PacketHeader); }
inline const std::byte* payload_of(const PacketHeader* h) {
  return reinterpret_cast<const std::byte*>(h) + sizeof(PacketHeader);
}

}  // namespace hcomm::shm
