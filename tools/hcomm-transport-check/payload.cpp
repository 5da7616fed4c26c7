#include "payload.hpp"

#include <cstring>

#include "failure.hpp"

namespace hcomm::tcheck {

namespace {

uint64_t splitmix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

uint64_t mix(uint64_t a, uint64_t b) { return splitmix(splitmix(a) ^ b); }

Payload::Payload(int sender, int receiver, uint64_t message_id, size_t size)
    : seed_(mix(mix(mix(static_cast<uint64_t>(sender), static_cast<uint64_t>(receiver)), message_id), size)),
      size_(size) {}

uint64_t Payload::word(size_t index) const { return splitmix(seed_ + index); }

uint8_t Payload::byte_at(size_t offset) const { return static_cast<uint8_t>(word(offset / 8) >> (8 * (offset % 8))); }

void Payload::fill(uint8_t* buf) const {
  size_t words = size_ / 8;
  for (size_t i = 0; i < words; ++i) {
    uint64_t w = word(i);
    std::memcpy(buf + 8 * i, &w, 8);  // little-endian, as byte_at reads it
  }
  for (size_t off = words * 8; off < size_; ++off) buf[off] = byte_at(off);
}

std::string Payload::mismatch(const uint8_t* buf) const {
  size_t words = size_ / 8;
  size_t first = size_;
  for (size_t i = 0; i < words && first == size_; ++i) {
    uint64_t w = word(i);
    if (std::memcmp(buf + 8 * i, &w, 8) != 0) first = 8 * i;
  }
  if (first == size_) first = words * 8;
  while (first < size_ && buf[first] == byte_at(first)) ++first;
  if (first == size_) return "";
  size_t wrong = 0;
  for (size_t off = first; off < size_; ++off) wrong += buf[off] != byte_at(off);
  return format("byte %zu of %zu is 0x%02x, expected 0x%02x (%zu bytes differ from there on)", first, size_, buf[first],
                byte_at(first), wrong);
}

ReceiveBuffer::ReceiveBuffer(size_t capacity) : bytes_(new uint8_t[capacity > 0 ? capacity : 1]), capacity_(capacity) {
  std::memset(bytes_.get(), kGuard, capacity_);
}

std::string ReceiveBuffer::check(const Payload& expected) const {
  std::string wrong = expected.mismatch(bytes_.get());
  if (!wrong.empty()) return wrong;
  for (size_t off = expected.size(); off < capacity_; ++off) {
    if (bytes_[off] != kGuard)
      return format("byte %zu, past the %zu-byte message in a %zu-byte receive, was overwritten", off, expected.size(),
                    capacity_);
  }
  return "";
}

SendBuffer::SendBuffer(const Payload& payload)
    : bytes_(new uint8_t[payload.size() > 0 ? payload.size() : 1]), size_(payload.size()) {
  payload.fill(bytes_.get());
}

}  // namespace hcomm::tcheck
