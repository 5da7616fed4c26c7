// The scratch buffers of a communicator's operations, kept and reused: a
// call neither allocates nor faults pages in once the pool has grown.
#pragma once

#include <algorithm>
#include <cstdint>
#include <list>
#include <vector>

namespace hcomm::exec {

class ScratchPool {
 public:
  using Buffer = std::vector<uint8_t>;

  // A buffer of at least `bytes`: a free one that is large enough, else a
  // free one grown (rather than one more), else a new one.
  Buffer* acquire(uint64_t bytes) {
    auto best = std::find_if(free_.begin(), free_.end(), [&](Buffer* b) { return b->size() >= bytes; });
    if (best != free_.end()) {
      Buffer* b = *best;
      free_.erase(best);
      return b;
    }
    if (!free_.empty()) {
      Buffer* b = free_.back();
      free_.pop_back();
      b->resize(bytes);
      return b;
    }
    return &all_.emplace_back(bytes);
  }
  void release(Buffer* b) { free_.push_back(b); }

 private:
  std::list<Buffer> all_;
  std::vector<Buffer*> free_;
};

}  // namespace hcomm::exec
