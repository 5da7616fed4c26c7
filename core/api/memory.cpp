// The C API of mappable memory: hcomm_mem_alloc / hcomm_mem_free and
// hcomm_mem_register / hcomm_mem_deregister, over the links' memory service,
// and hcomm_mem_alloc_device, over the device plugin.
#include "core/links/memory.hpp"

#include <mutex>
#include <unordered_set>

#include "core/api/checks.hpp"
#include "core/comm/communicator.hpp"
#include "core/device/accelerator.hpp"

using namespace hcomm;

namespace {

// What hcomm_mem_alloc_device handed out and hcomm_mem_free has not taken back.
struct DeviceAllocations {
  std::mutex mutex;
  std::unordered_set<void*> live;
};
DeviceAllocations& device_allocations() {
  static auto* allocations = new DeviceAllocations;  // outlives the exit-time frees of static objects
  return *allocations;
}

// Takes ptr out of the table; false when hcomm_mem_alloc_device did not hand it out.
bool forget_device_allocation(void* ptr) {
  DeviceAllocations& a = device_allocations();
  const std::lock_guard lock(a.mutex);
  return a.live.erase(ptr) == 1;
}

}  // namespace

extern "C" {

HCOMM_API hcomm_result_t hcomm_mem_alloc(void** ptr, size_t bytes) {
  return c_boundary([&] {
    HCOMM_ARG_CHECK(ptr, "hcomm_mem_alloc: ptr is NULL");
    *ptr = nullptr;
    HCOMM_ARG_CHECK(bytes > 0 && bytes <= api::kMaxBytes, "hcomm_mem_alloc: bytes is %zu; ask for 1 to %zu bytes",
                    bytes, api::kMaxBytes);
    *ptr = links::allocate(bytes);
    return HCOMM_SUCCESS;
  });
}

HCOMM_API hcomm_result_t hcomm_mem_alloc_device(void** ptr, size_t bytes) {
  return c_boundary([&] {
    HCOMM_ARG_CHECK(ptr, "hcomm_mem_alloc_device: ptr is NULL");
    *ptr = nullptr;
    HCOMM_ARG_CHECK(bytes > 0 && bytes <= api::kMaxBytes,
                    "hcomm_mem_alloc_device: bytes is %zu; ask for 1 to %zu bytes", bytes, api::kMaxBytes);
    const device::Accelerator* accelerator = device::Accelerator::get();
    if (!accelerator)
      HCOMM_THROW(HCOMM_ERR_UNSUPPORTED,
                  "hcomm_mem_alloc_device: no device plugin sees a device (HCOMM_DEBUG=INFO says why: no GPU or "
                  "driver, or no libhcomm_device_*.so on HCOMM_PLUGIN_PATH)");
    void* p = accelerator->alloc_shareable(bytes);
    DeviceAllocations& a = device_allocations();
    const std::lock_guard lock(a.mutex);
    a.live.insert(p);
    *ptr = p;
    return HCOMM_SUCCESS;
  });
}

HCOMM_API hcomm_result_t hcomm_mem_free(void* ptr) {
  return c_boundary([&] {
    if (!ptr) return HCOMM_SUCCESS;
    if (forget_device_allocation(ptr)) {
      device::Accelerator::get()->free_shareable(ptr);
      return HCOMM_SUCCESS;
    }
    links::free_allocated(ptr);
    return HCOMM_SUCCESS;
  });
}

HCOMM_API hcomm_result_t hcomm_mem_register(hcomm_comm_t comm, void* ptr, size_t bytes, void** handle) {
  return c_boundary([&] {
    comm::Communicator& c = api::checked_comm("hcomm_mem_register", comm);
    const auto turn = c.host_turn();
    HCOMM_ARG_CHECK(handle, "hcomm_mem_register: handle is NULL");
    *handle = nullptr;
    HCOMM_ARG_CHECK(ptr, "hcomm_mem_register: ptr is NULL");
    HCOMM_ARG_CHECK(bytes > 0 && bytes <= api::kMaxBytes, "hcomm_mem_register: bytes is %zu; register 1 to %zu bytes",
                    bytes, api::kMaxBytes);
    // Registration moves host pages; a device's memory is never touched so.
    if (const device::Accelerator* a = device::Accelerator::get();
        a && (a->owns(ptr) || a->owns(static_cast<const uint8_t*>(ptr) + bytes - 1)))
      HCOMM_THROW(HCOMM_ERR_UNSUPPORTED,
                  "hcomm_mem_register: ptr is %s device memory, which registration does not take yet; calls on it "
                  "need none (they stage it through host memory)",
                  a->name());
    *handle = links::register_memory(c.links(), ptr, bytes);
    return HCOMM_SUCCESS;
  });
}

HCOMM_API hcomm_result_t hcomm_mem_deregister(hcomm_comm_t comm, void* handle) {
  return c_boundary([&] {
    const auto turn = api::checked_comm("hcomm_mem_deregister", comm).host_turn();
    links::deregister_memory(handle);
    return HCOMM_SUCCESS;
  });
}

}  // extern "C"
