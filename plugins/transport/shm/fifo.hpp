// Single-producer single-consumer packet ring over one FifoControl and its data.
//
// Packets are cache-line aligned and at most one slot (a kSlotsPerFifo-th of
// the ring) long. A packet never wraps: when the next one does not fit before
// the end of the ring, a Pad packet fills the rest. The producer publishes
// packets by storing head, the consumer frees them by storing tail; both
// stores release what came before them (they are seq_cst for the doorbell's
// sake), and each side reads the other's counter before it touches the data.
#pragma once

#include <cstddef>
#include <cstdint>

#include "layout.hpp"

namespace hcomm::shm {

// The ring's pages mapped into this process ahead of the packets on the
// first pass through it, kStep at a time (MADV_POPULATE_WRITE for the
// producer, MADV_POPULATE_READ for the consumer), instead of a page fault
// per 4 KiB on each side, which slowed a new ring's first calls down until
// it had wrapped. Only the part of the ring that traffic reaches is populated.
class RingPages {
 public:
  RingPages(const std::byte* data, uint64_t capacity, bool writes)
      : data_(data), capacity_(capacity), writes_(writes) {}
  // Bytes [0, end) of the ring are mapped here.
  void cover(uint64_t end) {
    if (end > populated_) populate(end);
  }

 private:
  static constexpr uint64_t kStep = 64 << 10;
  void populate(uint64_t end);

  const std::byte* data_;
  uint64_t capacity_;
  bool writes_;
  uint64_t populated_ = 0;
};

class FifoProducer {
 public:
  FifoProducer(FifoControl& control, std::byte* data, uint64_t capacity);

  uint64_t max_payload() const { return max_payload_; }
  // Room for a packet of `payload_bytes` (at most max_payload), or nullptr
  // while the ring is too full. The caller fills it, then commits.
  PacketHeader* reserve(uint64_t payload_bytes);
  void commit();
  // True when a packet of `payload_bytes` would fit now.
  bool has_room(uint64_t payload_bytes);
  // Bytes committed so far: tells whether a batch of sends wrote anything.
  uint64_t written() const { return head_; }

 private:
  uint64_t bytes_needed(uint64_t packet) const;
  bool room_for(uint64_t bytes);

  FifoControl& control_;
  std::byte* data_;
  uint64_t capacity_;
  uint64_t max_payload_;
  uint64_t head_;       // this side's copy of head, ahead of it while a packet is reserved
  uint64_t tail_seen_;  // last tail read; refreshed only when the ring looks full
  uint64_t reserved_ = 0;
  RingPages pages_;
};

class FifoConsumer {
 public:
  FifoConsumer(FifoControl& control, const std::byte* data, uint64_t capacity);

  // The next packet, or nullptr when the ring is empty. Throws on a header
  // that does not describe a packet inside the ring.
  const PacketHeader* peek();
  // Frees the packet peek returned.
  void release();
  bool readable();

 private:
  const PacketHeader* validated(uint64_t pos, uint64_t available) const;

  FifoControl& control_;
  const std::byte* data_;
  uint64_t capacity_;
  uint64_t max_packet_;
  uint64_t tail_;
  uint64_t head_seen_;
  uint64_t current_ = 0;  // size of the packet peek returned
  RingPages pages_;
};

}  // namespace hcomm::shm
