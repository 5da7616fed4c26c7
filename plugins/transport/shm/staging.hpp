// The data of a message that came before its receive, held until the receive
// is posted. Its memory grows with the data that actually arrived, in blocks
// each no larger than what the blocks before it hold (but kFirstBlock at
// least), and never beyond what the message still lacks: what a message's
// header announces sizes nothing, so a bogus length cannot make the receiver
// allocate more than about twice what the peer really sent.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace hcomm::shm {

class Staging {
 public:
  static constexpr uint64_t kFirstBlock = 64 << 10;

  // Appends n bytes of a message that lacks `missing` bytes before these
  // arrive (n <= missing, checked by the caller).
  void append(const std::byte* data, uint64_t n, uint64_t missing);
  // Copies everything held to `target`, in order.
  void copy_to(std::byte* target) const;
  void clear();

 private:
  struct Block {
    std::unique_ptr<std::byte[]> data;
    uint64_t capacity;
    uint64_t used;
  };
  std::vector<Block> blocks_;
  uint64_t size_ = 0;  // bytes held
};

}  // namespace hcomm::shm
