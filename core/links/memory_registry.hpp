// The host memory of this process that peers can map: buffers from
// hcomm_mem_alloc and buffers registered with hcomm_mem_register, by address
// range. Collectives look up their buffers here on every call, so a lookup
// in an empty registry is one atomic load and otherwise one ordered search.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

#include "hcomm/plugin/transport.h"

namespace hcomm::links {

struct MemoryRegion {
  uintptr_t base;
  size_t bytes;
  const void* maker;  // the transport that made it mappable, or nullptr
  void* handle;       // that transport's mem handle
  hcomm_mem_desc_t desc;
  bool allocated;  // from hcomm_mem_alloc (else only registered)
  uint32_t registrations = 0;
};

class MemoryRegistry {
 public:
  static MemoryRegistry& instance();

  // Adds a region; throws HCOMM_ERR_INVALID_ARGUMENT when it overlaps one.
  MemoryRegion& add(const MemoryRegion& region);
  // The region that holds all of [ptr, ptr + bytes), or nullptr; throws
  // HCOMM_ERR_INVALID_ARGUMENT when the range overlaps a region partly.
  MemoryRegion* containing(const void* ptr, size_t bytes);
  // The region at `handle` (a MemoryRegion* given out earlier), or nullptr.
  MemoryRegion* find(const void* handle);
  void remove(const MemoryRegion& region);

  // The mappable part of the region `maker` made that holds `ptr` (peers
  // clip it to what they read); out->bytes 0 when there is none.
  void describe(const void* ptr, const void* maker, hcomm_mem_desc_t* out) const;

 private:
  mutable std::mutex mutex_;
  std::atomic<size_t> count_{0};
  std::map<uintptr_t, MemoryRegion> regions_;  // by base
};

}  // namespace hcomm::links
