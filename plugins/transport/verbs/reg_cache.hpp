// Memory registrations of user buffers, keyed by address interval and
// reference counted: transfers inside a registered range reuse it, a miss
// registers whole pages (grown over unused neighbours it overlaps, which are
// dropped), and a registration no transfer uses is kept (least recently used
// first out) only while the unused ones fit in the cache's budget.
// invalidate() drops what covers a range whose memory is given back; one
// still in use is dropped when its last transfer ends. Thread safe: nets of
// one process share their device's cache.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>

namespace hcomm::verbs {

struct MemoryKey {
  void* handle = nullptr;  // the ibv_mr, or a test's stand-in
  uint32_t lkey = 0;
  uint32_t rkey = 0;
};

class RegCache {
 public:
  // Registers [start, start + bytes) or throws; deregisters a key.
  using RegisterFn = std::function<MemoryKey(uintptr_t start, size_t bytes)>;
  using DeregisterFn = std::function<void(const MemoryKey&)>;

  struct Entry {
    uintptr_t start = 0;
    uintptr_t end = 0;
    MemoryKey key;
    int refs = 0;
    bool stale = false;  // its memory was given back: never found again
    std::list<Entry*>::iterator unused_pos;
  };

  struct Stats {
    uint64_t hits = 0;
    uint64_t misses = 0;
    uint64_t evictions = 0;
    size_t entries = 0;
    size_t unused_bytes = 0;
  };

  RegCache(RegisterFn reg, DeregisterFn dereg, size_t keep_bytes, size_t page_bytes);
  ~RegCache();
  RegCache(const RegCache&) = delete;
  RegCache& operator=(const RegCache&) = delete;

  // A registration covering [ptr, ptr + bytes), with one more reference.
  const Entry* acquire(const void* ptr, size_t bytes);
  void release(const Entry* entry);
  // Drops every registration overlapping the range; returns how many.
  size_t invalidate(const void* ptr, size_t bytes);
  Stats stats() const;

 private:
  void leave_unused(Entry* e);
  void drop(Entry* e);
  void trim();

  const RegisterFn reg_;
  const DeregisterFn dereg_;
  const size_t keep_bytes_;
  const uintptr_t page_mask_;
  mutable std::mutex mutex_;
  std::multimap<uintptr_t, std::unique_ptr<Entry>> entries_;  // by start
  std::list<Entry*> unused_;                                  // refs 0, most recently used first
  size_t unused_bytes_ = 0;
  Stats stats_;
};

}  // namespace hcomm::verbs
