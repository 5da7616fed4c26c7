#include "reg_cache.hpp"

#include <algorithm>
#include <vector>

namespace hcomm::verbs {

RegCache::RegCache(RegisterFn reg, DeregisterFn dereg, size_t keep_bytes, size_t page_bytes)
    : reg_(std::move(reg)), dereg_(std::move(dereg)), keep_bytes_(keep_bytes), page_mask_(~(page_bytes - 1)) {}

RegCache::~RegCache() {
  for (auto& [start, e] : entries_) dereg_(e->key);
}

const RegCache::Entry* RegCache::acquire(const void* ptr, size_t bytes) {
  const uintptr_t lo = reinterpret_cast<uintptr_t>(ptr);
  const uintptr_t hi = lo + std::max<size_t>(bytes, 1);
  std::lock_guard lock(mutex_);
  // Entries starting at or below lo are candidates; the smallest that covers wins
  // (it is the one most likely to go first, leaving big ones for big transfers).
  Entry* found = nullptr;
  for (auto it = entries_.upper_bound(lo); it != entries_.begin();) {
    Entry* e = (--it)->second.get();
    if (!e->stale && e->end >= hi && (!found || e->end - e->start < found->end - found->start)) found = e;
  }
  if (found) {
    ++stats_.hits;
    if (found->refs++ == 0) leave_unused(found);
    return found;
  }
  ++stats_.misses;
  uintptr_t start = lo & page_mask_;
  uintptr_t end = (hi + ~page_mask_) & page_mask_;
  // Grow over unused neighbours that overlap or touch, so that one
  // registration replaces them.
  std::vector<Entry*> absorbed;
  for (auto& [s, e] : entries_)
    if (e->refs == 0 && !e->stale && e->start <= end && e->end >= start) absorbed.push_back(e.get());
  for (Entry* e : absorbed) {
    start = std::min(start, e->start);
    end = std::max(end, e->end);
  }
  auto entry = std::make_unique<Entry>();
  entry->start = start;
  entry->end = end;
  entry->key = reg_(start, end - start);  // before anything changes: it may throw
  entry->refs = 1;
  for (Entry* e : absorbed) {
    leave_unused(e);
    drop(e);
  }
  Entry* out = entry.get();
  entries_.emplace(start, std::move(entry));
  return out;
}

void RegCache::release(const Entry* entry) {
  std::lock_guard lock(mutex_);
  Entry* e = const_cast<Entry*>(entry);
  if (--e->refs > 0) return;
  if (e->stale) return drop(e);
  unused_.push_front(e);
  e->unused_pos = unused_.begin();
  unused_bytes_ += e->end - e->start;
  trim();
}

size_t RegCache::invalidate(const void* ptr, size_t bytes) {
  const uintptr_t lo = reinterpret_cast<uintptr_t>(ptr);
  const uintptr_t hi = lo + bytes;
  std::lock_guard lock(mutex_);
  std::vector<Entry*> hit;
  for (auto& [s, e] : entries_)
    if (!e->stale && e->start < hi && e->end > lo) hit.push_back(e.get());
  for (Entry* e : hit) {
    if (e->refs > 0) {
      e->stale = true;
    } else {
      leave_unused(e);
      drop(e);
    }
  }
  return hit.size();
}

RegCache::Stats RegCache::stats() const {
  std::lock_guard lock(mutex_);
  Stats s = stats_;
  s.entries = entries_.size();
  s.unused_bytes = unused_bytes_;
  return s;
}

void RegCache::leave_unused(Entry* e) {
  unused_.erase(e->unused_pos);
  unused_bytes_ -= e->end - e->start;
}

// The entry is out of the unused list already (or never was in it).
void RegCache::drop(Entry* e) {
  ++stats_.evictions;
  dereg_(e->key);
  auto [first, last] = entries_.equal_range(e->start);
  for (auto it = first; it != last; ++it)
    if (it->second.get() == e) {
      entries_.erase(it);
      return;
    }
}

void RegCache::trim() {
  while (unused_bytes_ > keep_bytes_) {
    Entry* e = unused_.back();
    leave_unused(e);
    drop(e);
  }
}

}  // namespace hcomm::verbs
