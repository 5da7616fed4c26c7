// The C API of mappable memory: hcomm_mem_alloc / hcomm_mem_free and
// hcomm_mem_register / hcomm_mem_deregister, over the links' memory service.
#include "core/links/memory.hpp"

#include "core/api/checks.hpp"
#include "core/comm/communicator.hpp"

using namespace hcomm;

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

HCOMM_API hcomm_result_t hcomm_mem_free(void* ptr) {
  return c_boundary([&] {
    if (ptr) links::free_allocated(ptr);
    return HCOMM_SUCCESS;
  });
}

HCOMM_API hcomm_result_t hcomm_mem_register(hcomm_comm_t comm, void* ptr, size_t bytes, void** handle) {
  return c_boundary([&] {
    comm::Communicator& c = api::checked_comm("hcomm_mem_register", comm);
    HCOMM_ARG_CHECK(handle, "hcomm_mem_register: handle is NULL");
    *handle = nullptr;
    HCOMM_ARG_CHECK(ptr, "hcomm_mem_register: ptr is NULL");
    HCOMM_ARG_CHECK(bytes > 0 && bytes <= api::kMaxBytes, "hcomm_mem_register: bytes is %zu; register 1 to %zu bytes",
                    bytes, api::kMaxBytes);
    *handle = links::register_memory(c.links(), ptr, bytes);
    return HCOMM_SUCCESS;
  });
}

HCOMM_API hcomm_result_t hcomm_mem_deregister(hcomm_comm_t comm, void* handle) {
  return c_boundary([&] {
    api::checked_comm("hcomm_mem_deregister", comm);
    links::deregister_memory(handle);
    return HCOMM_SUCCESS;
  });
}

}  // extern "C"
