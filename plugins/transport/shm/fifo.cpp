#include "fifo.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>

#include "hcomm/plugin/util.hpp"

#ifndef MADV_POPULATE_READ  // Linux 5.14
#define MADV_POPULATE_READ 22
#define MADV_POPULATE_WRITE 23
#endif

namespace hcomm::shm {

// A kernel without MADV_POPULATE_* refuses it: the ring's pages then fault
// in on first touch, as they would without this.
void RingPages::populate(uint64_t end) {
  const uint64_t to = std::min(capacity_, align_up(std::max(end, populated_ + kStep), kPage));
  const int advice = writes_ ? MADV_POPULATE_WRITE : MADV_POPULATE_READ;
  const bool done = ::madvise(const_cast<std::byte*>(data_) + populated_, to - populated_, advice) == 0;
  populated_ = done ? to : capacity_;
}

FifoProducer::FifoProducer(FifoControl& control, std::byte* data, uint64_t capacity)
    : control_(control),
      data_(data),
      capacity_(capacity),
      max_payload_(max_packet_bytes(capacity) - sizeof(PacketHeader)),
      head_(control.head.load(std::memory_order_relaxed)),
      tail_seen_(control.tail.load(std::memory_order_acquire)),
      pages_(data, capacity, true) {}

// A packet that would cross the end of the ring needs the rest of it as padding too.
uint64_t FifoProducer::bytes_needed(uint64_t packet) const {
  uint64_t to_end = capacity_ - head_ % capacity_;
  return to_end < packet ? to_end + packet : packet;
}

bool FifoProducer::room_for(uint64_t bytes) {
  if (head_ + bytes - tail_seen_ <= capacity_) return true;
  tail_seen_ = control_.tail.load(std::memory_order_seq_cst);
  return head_ + bytes - tail_seen_ <= capacity_;
}

bool FifoProducer::has_room(uint64_t payload_bytes) { return room_for(bytes_needed(packet_bytes(payload_bytes))); }

PacketHeader* FifoProducer::reserve(uint64_t payload_bytes) {
  const uint64_t packet = packet_bytes(payload_bytes);
  if (!room_for(bytes_needed(packet))) return nullptr;
  pages_.cover(std::min(capacity_, head_ % capacity_ + packet));  // a packet or a pad from there
  uint64_t to_end = capacity_ - head_ % capacity_;
  if (to_end < packet) {
    auto* pad = reinterpret_cast<PacketHeader*>(data_ + head_ % capacity_);
    *pad = PacketHeader{.type = PacketType::Pad,
                        .payload_bytes = static_cast<uint32_t>(to_end - sizeof(PacketHeader)),
                        .tag = 0,
                        .length = 0,
                        .cookie = 0};
    head_ += to_end;  // published together with the packet
  }
  reserved_ = packet;
  auto* h = reinterpret_cast<PacketHeader*>(data_ + head_ % capacity_);
  h->payload_bytes = static_cast<uint32_t>(payload_bytes);
  return h;
}

void FifoProducer::commit() {
  head_ += reserved_;
  reserved_ = 0;
  control_.head.store(head_, std::memory_order_seq_cst);
}

FifoConsumer::FifoConsumer(FifoControl& control, const std::byte* data, uint64_t capacity)
    : control_(control),
      data_(data),
      capacity_(capacity),
      max_packet_(max_packet_bytes(capacity)),
      tail_(control.tail.load(std::memory_order_relaxed)),
      head_seen_(control.head.load(std::memory_order_acquire)),
      pages_(data, capacity, false) {}

bool FifoConsumer::readable() {
  if (tail_ != head_seen_) return true;
  head_seen_ = control_.head.load(std::memory_order_seq_cst);
  return tail_ != head_seen_;
}

const PacketHeader* FifoConsumer::validated(uint64_t pos, uint64_t available) const {
  const auto* h = reinterpret_cast<const PacketHeader*>(data_ + pos);
  const uint64_t size = packet_bytes(h->payload_bytes);
  const uint64_t limit = h->type == PacketType::Pad ? capacity_ - pos : max_packet_;
  if (size > limit || size > available || (h->type == PacketType::Pad && size != capacity_ - pos))
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INTERNAL,
                       "shm: corrupt packet in a FIFO (type %u, %u payload bytes at offset %llu of %llu, "
                       "%llu bytes published)",
                       static_cast<unsigned>(h->type), h->payload_bytes, static_cast<unsigned long long>(pos),
                       static_cast<unsigned long long>(capacity_), static_cast<unsigned long long>(available));
  return h;
}

const PacketHeader* FifoConsumer::peek() {
  for (;;) {
    if (!readable()) return nullptr;
    const uint64_t pos = tail_ % capacity_;
    pages_.cover(std::min(capacity_, pos + max_packet_));
    const PacketHeader* h = validated(pos, head_seen_ - tail_);
    current_ = packet_bytes(h->payload_bytes);
    if (h->type != PacketType::Pad) return h;
    release();
  }
}

void FifoConsumer::release() {
  tail_ += current_;
  current_ = 0;
  control_.tail.store(tail_, std::memory_order_seq_cst);
}

}  // namespace hcomm::shm
