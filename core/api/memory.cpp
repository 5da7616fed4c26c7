// The C API of mappable memory: hcomm_mem_alloc / hcomm_mem_free and
// hcomm_mem_register / hcomm_mem_deregister, over the memory registry and
// the transport that maps memory (shm).
#include <stdlib.h>
#include <unistd.h>

#include "core/api/checks.hpp"
#include "core/common/log.hpp"
#include "core/device/memory_registry.hpp"
#include "core/transport/auto_registry.hpp"
#include "core/transport/transport.hpp"

using namespace hcomm;

namespace {

device::MemoryRegistry& registry() { return device::MemoryRegistry::instance(); }

// Gives a region's memory back: the transport's, or plain memory.
void release(const device::MemoryRegion& r) {
  const auto* t = static_cast<const transport::Transport*>(r.maker);
  if (t)
    t->check(t->iface().mem_release(r.handle), "mem_release");
  else if (r.allocated)
    ::free(reinterpret_cast<void*>(r.base));
}

}  // namespace

extern "C" {

HCOMM_API hcomm_result_t hcomm_mem_alloc(void** ptr, size_t bytes) {
  return c_boundary([&] {
    HCOMM_ARG_CHECK(ptr, "hcomm_mem_alloc: ptr is NULL");
    *ptr = nullptr;
    HCOMM_ARG_CHECK(bytes > 0 && bytes <= api::kMaxBytes, "hcomm_mem_alloc: bytes is %zu; ask for 1 to %zu bytes",
                    bytes, api::kMaxBytes);
    device::MemoryRegion r{.base = 0, .bytes = bytes, .maker = nullptr, .handle = nullptr, .desc = {}, .allocated = true};
    if (transport::Transport* t = transport::memory_transport()) {
      void* p = nullptr;
      t->check(t->iface().mem_alloc(t->ctx(), bytes, &p, &r.handle, &r.desc), "mem_alloc");
      r.base = reinterpret_cast<uintptr_t>(p);
      r.maker = t;
    } else {
      // No transport maps memory here: plain memory, which collectives copy.
      void* p = nullptr;
      if (::posix_memalign(&p, static_cast<size_t>(::sysconf(_SC_PAGESIZE)), bytes) != 0)
        HCOMM_THROW(HCOMM_ERR_SYSTEM, "hcomm_mem_alloc: out of memory for %zu bytes", bytes);
      r.base = reinterpret_cast<uintptr_t>(p);
      HCOMM_INFO(INIT, "hcomm_mem_alloc: no loaded transport maps memory; %zu bytes of plain memory", bytes);
    }
    try {
      registry().add(r);
    } catch (...) {
      release(r);
      throw;
    }
    *ptr = reinterpret_cast<void*>(r.base);
    return HCOMM_SUCCESS;
  });
}

HCOMM_API hcomm_result_t hcomm_mem_free(void* ptr) {
  return c_boundary([&] {
    if (!ptr) return HCOMM_SUCCESS;
    device::MemoryRegion* r = registry().containing(ptr, 1);
    HCOMM_ARG_CHECK(r && r->allocated && r->base == reinterpret_cast<uintptr_t>(ptr),
                    "hcomm_mem_free: %p was not returned by hcomm_mem_alloc (or was freed already)", ptr);
    HCOMM_ARG_CHECK(r->registrations == 0,
                    "hcomm_mem_free: %p is still registered %u times; hcomm_mem_deregister it first", ptr,
                    r->registrations);
    const device::MemoryRegion region = *r;
    registry().remove(region);
    release(region);
    return HCOMM_SUCCESS;
  });
}

// Memory inside a region registered or allocated before shares that region.
HCOMM_API hcomm_result_t hcomm_mem_register(hcomm_comm_t comm, void* ptr, size_t bytes, void** handle) {
  return c_boundary([&] {
    comm::Communicator& c = api::checked_comm("hcomm_mem_register", comm);
    HCOMM_ARG_CHECK(handle, "hcomm_mem_register: handle is NULL");
    *handle = nullptr;
    HCOMM_ARG_CHECK(ptr, "hcomm_mem_register: ptr is NULL");
    HCOMM_ARG_CHECK(bytes > 0 && bytes <= api::kMaxBytes, "hcomm_mem_register: bytes is %zu; register 1 to %zu bytes",
                    bytes, api::kMaxBytes);
    // Pages the core moved on its own go back first, for this registration to move.
    transport::AutoRegistry::instance().release_overlapping(ptr, bytes);
    device::MemoryRegion* r = registry().containing(ptr, bytes);
    if (!r) {
      device::MemoryRegion fresh{.base = reinterpret_cast<uintptr_t>(ptr), .bytes = bytes, .maker = nullptr,
                                 .handle = nullptr, .desc = {}, .allocated = false};
      if (const transport::Transport* t = c.peers().memory_transport()) {
        t->check(t->iface().mem_register(t->ctx(), ptr, bytes, &fresh.handle, &fresh.desc), "mem_register");
        fresh.maker = t;
      }
      try {
        r = &registry().add(fresh);
      } catch (...) {
        release(fresh);
        throw;
      }
    }
    ++r->registrations;
    *handle = r;
    return HCOMM_SUCCESS;
  });
}

HCOMM_API hcomm_result_t hcomm_mem_deregister(hcomm_comm_t comm, void* handle) {
  return c_boundary([&] {
    api::checked_comm("hcomm_mem_deregister", comm);
    device::MemoryRegion* r = handle ? registry().find(handle) : nullptr;
    HCOMM_ARG_CHECK(r && r->registrations > 0,
                    "hcomm_mem_deregister: handle %p is not from hcomm_mem_register (or was deregistered already)",
                    handle);
    if (--r->registrations > 0 || r->allocated) return HCOMM_SUCCESS;
    const device::MemoryRegion region = *r;
    registry().remove(region);
    release(region);
    return HCOMM_SUCCESS;
  });
}

}  // extern "C"
