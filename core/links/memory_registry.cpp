#include "core/links/memory_registry.hpp"

#include "core/common/error.hpp"

namespace hcomm::links {

MemoryRegistry& MemoryRegistry::instance() {
  static MemoryRegistry registry;
  return registry;
}

MemoryRegion& MemoryRegistry::add(const MemoryRegion& region) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto next = regions_.lower_bound(region.base);
  bool overlaps = next != regions_.end() && next->first < region.base + region.bytes;
  if (next != regions_.begin()) {
    auto previous = std::prev(next);
    overlaps = overlaps || previous->first + previous->second.bytes > region.base;
  }
  if (overlaps)
    HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                "memory at %p (%zu bytes) overlaps memory registered or allocated before; "
                "deregister that first",
                reinterpret_cast<void*>(region.base), region.bytes);
  MemoryRegion& added = regions_.emplace(region.base, region).first->second;
  count_.store(regions_.size(), std::memory_order_release);
  return added;
}

MemoryRegion* MemoryRegistry::containing(const void* ptr, size_t bytes) {
  const uintptr_t start = reinterpret_cast<uintptr_t>(ptr), end = start + bytes;
  std::lock_guard<std::mutex> lock(mutex_);
  auto next = regions_.upper_bound(start);
  if (next != regions_.begin()) {
    MemoryRegion& r = std::prev(next)->second;
    if (r.base + r.bytes >= end) return &r;
    if (r.base + r.bytes > start) next = std::prev(next);
  }
  if (next != regions_.end() && next->first < end)
    HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                "memory at %p (%zu bytes) overlaps part of the %zu bytes registered or "
                "allocated at %p; register either all of a region or memory outside every region",
                ptr, bytes, next->second.bytes, reinterpret_cast<void*>(next->first));
  return nullptr;
}

MemoryRegion* MemoryRegistry::find(const void* handle) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [base, r] : regions_)
    if (&r == handle) return &r;
  return nullptr;
}

void MemoryRegistry::remove(const MemoryRegion& region) {
  std::lock_guard<std::mutex> lock(mutex_);
  regions_.erase(region.base);
  count_.store(regions_.size(), std::memory_order_release);
}

void MemoryRegistry::describe(const void* ptr, const void* maker, hcomm_mem_desc_t* out) const {
  out->bytes = 0;
  if (count_.load(std::memory_order_acquire) == 0 || !maker) return;
  const uintptr_t at = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(mutex_);
  auto next = regions_.upper_bound(at);
  if (next == regions_.begin()) return;
  const MemoryRegion& r = std::prev(next)->second;
  if (at < r.base + r.bytes && r.maker == maker) *out = r.desc;
}

}  // namespace hcomm::links
