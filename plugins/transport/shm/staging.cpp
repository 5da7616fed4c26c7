#include "staging.hpp"

#include <algorithm>

#include "hcomm/plugin/copy.hpp"

namespace hcomm::shm {

void Staging::append(const std::byte* data, uint64_t n, uint64_t missing) {
  while (n) {
    if (blocks_.empty() || blocks_.back().used == blocks_.back().capacity) {
      const uint64_t capacity = std::min(missing, std::max({size_, kFirstBlock, n}));
      blocks_.push_back(Block{std::make_unique_for_overwrite<std::byte[]>(capacity), capacity, 0});
    }
    Block& b = blocks_.back();
    const uint64_t take = std::min(n, b.capacity - b.used);
    plugin::copy_bytes(b.data.get() + b.used, data, take);
    b.used += take;
    size_ += take;
    data += take;
    n -= take;
    missing -= take;
  }
}

void Staging::copy_to(std::byte* target) const {
  for (const Block& b : blocks_) {
    plugin::copy_bytes(target, b.data.get(), b.used);
    target += b.used;
  }
}

void Staging::clear() {
  blocks_.clear();
  size_ = 0;
}

}  // namespace hcomm::shm
