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
};

}  // namespace hcomm::shm
