// Message contents that the receiver can check byte by byte without seeing the
// sender's buffer: every byte is a function of (sender, receiver, message id,
// size, offset), so a message delivered to the wrong receive, out of order,
// shifted or cut short shows up as a mismatch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace hcomm::tcheck {

// Mixes values into one well-spread 64-bit number (splitmix64 steps).
uint64_t mix(uint64_t a, uint64_t b);

class Payload {
 public:
  Payload(int sender, int receiver, uint64_t message_id, size_t size);

  size_t size() const { return size_; }
  void fill(uint8_t* buf) const;
  // Empty if `buf` holds exactly this payload, else where and how it differs.
  std::string mismatch(const uint8_t* buf) const;

 private:
  uint8_t byte_at(size_t offset) const;
  uint64_t word(size_t index) const;

  uint64_t seed_;
  size_t size_;
};

// A receive buffer: `capacity` bytes, of which the bytes past the expected
// message are a guard that the transport must leave untouched.
class ReceiveBuffer {
 public:
  static constexpr uint8_t kGuard = 0xA5;

  explicit ReceiveBuffer(size_t capacity);
  uint8_t* data() { return bytes_.get(); }
  size_t capacity() const { return capacity_; }
  // Empty if the first expected.size() bytes hold `expected` and the rest is
  // still guard; else what is wrong.
  std::string check(const Payload& expected) const;

 private:
  std::unique_ptr<uint8_t[]> bytes_;
  size_t capacity_;
};

// A send buffer holding one payload.
class SendBuffer {
 public:
  explicit SendBuffer(const Payload& payload);
  const uint8_t* data() const { return bytes_.get(); }
  size_t size() const { return size_; }

 private:
  std::unique_ptr<uint8_t[]> bytes_;
  size_t size_;
};

}  // namespace hcomm::tcheck
