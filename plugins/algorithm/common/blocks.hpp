// A buffer of `count` elements cut into `parts` blocks of near-equal size:
// block b holds elements [b*count/parts, (b+1)*count/parts), so sizes differ
// by at most one element and every rank computes the same cut.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hcomm::algo {

class BlockPartition {
 public:
  BlockPartition(uint64_t count, int parts, size_t elem_size)
      : parts_(static_cast<uint64_t>(parts)),
        quotient_(count / parts_),
        remainder_(count % parts_),
        elem_size_(elem_size) {}

  uint64_t offset(int block) const { return first(static_cast<uint64_t>(block)) * elem_size_; }
  uint64_t bytes(int block) const {
    uint64_t b = static_cast<uint64_t>(block);
    return (first(b + 1) - first(b)) * elem_size_;
  }
  uint64_t max_bytes() const { return (quotient_ + (remainder_ ? 1 : 0)) * elem_size_; }

 private:
  // b*count/parts, written so that b*count cannot overflow: b*remainder is
  // below parts^2, which fits for any int number of parts.
  uint64_t first(uint64_t block) const { return block * quotient_ + block * remainder_ / parts_; }

  uint64_t parts_;
  uint64_t quotient_;
  uint64_t remainder_;
  size_t elem_size_;
};

}  // namespace hcomm::algo
