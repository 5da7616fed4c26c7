#include "core/links/memory.hpp"

#include <stdlib.h>
#include <unistd.h>

#include "core/common/error.hpp"
#include "core/common/log.hpp"
#include "core/links/auto_registry.hpp"
#include "core/links/memory_registry.hpp"

namespace hcomm::links {

namespace {

MemoryRegistry& registry() { return MemoryRegistry::instance(); }

// Gives a region's memory back: the transport's, or plain memory.
void release(const MemoryRegion& r) {
  const auto* t = static_cast<const transport::Transport*>(r.maker);
  if (t)
    t->check(t->iface().mem_release(r.handle), "mem_release");
  else if (r.allocated)
    ::free(reinterpret_cast<void*>(r.base));
}

// Adds a region to the registry, or gives its memory back.
MemoryRegion& add(const MemoryRegion& r) {
  try {
    return registry().add(r);
  } catch (...) {
    release(r);
    throw;
  }
}

}  // namespace

void* allocate(size_t bytes) {
  MemoryRegion r{.base = 0, .bytes = bytes, .maker = nullptr, .handle = nullptr, .desc = {}, .allocated = true};
  if (transport::Transport* t = transport::memory_transport()) {
    void* p = nullptr;
    t->check(t->iface().mem_alloc(t->ctx(), bytes, &p, &r.handle, &r.desc), "mem_alloc");
    r.base = reinterpret_cast<uintptr_t>(p);
    r.maker = t;
  } else {
    void* p = nullptr;
    if (::posix_memalign(&p, static_cast<size_t>(::sysconf(_SC_PAGESIZE)), bytes) != 0)
      HCOMM_THROW(HCOMM_ERR_SYSTEM, "hcomm_mem_alloc: out of memory for %zu bytes", bytes);
    r.base = reinterpret_cast<uintptr_t>(p);
    HCOMM_INFO(INIT, "hcomm_mem_alloc: no loaded transport maps memory; %zu bytes of plain memory", bytes);
  }
  return reinterpret_cast<void*>(add(r).base);
}

void free_allocated(void* ptr) {
  MemoryRegion* r = registry().containing(ptr, 1);
  if (!r || !r->allocated || r->base != reinterpret_cast<uintptr_t>(ptr))
    HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                "hcomm_mem_free: %p was not returned by hcomm_mem_alloc (or was freed already)", ptr);
  if (r->registrations != 0)
    HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                "hcomm_mem_free: %p is still registered %u times; hcomm_mem_deregister it first", ptr,
                r->registrations);
  const MemoryRegion region = *r;
  registry().remove(region);
  release(region);
}

void* register_memory(const Links& links, void* ptr, size_t bytes) {
  // Pages the core moved on its own go back first, for this registration to move.
  AutoRegistry::instance().release_overlapping(ptr, bytes);
  MemoryRegion* r = registry().containing(ptr, bytes);
  if (!r) {
    MemoryRegion fresh{.base = reinterpret_cast<uintptr_t>(ptr),
                       .bytes = bytes,
                       .maker = nullptr,
                       .handle = nullptr,
                       .desc = {},
                       .allocated = false};
    if (const transport::Transport* t = links.memory_transport()) {
      t->check(t->iface().mem_register(t->ctx(), ptr, bytes, &fresh.handle, &fresh.desc), "mem_register");
      fresh.maker = t;
    }
    r = &add(fresh);
  }
  ++r->registrations;
  return r;
}

void deregister_memory(void* handle) {
  MemoryRegion* r = handle ? registry().find(handle) : nullptr;
  if (!r || r->registrations == 0)
    HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                "hcomm_mem_deregister: handle %p is not from hcomm_mem_register (or was deregistered already)", handle);
  if (--r->registrations > 0 || r->allocated) return;
  const MemoryRegion region = *r;
  registry().remove(region);
  release(region);
}

}  // namespace hcomm::links
