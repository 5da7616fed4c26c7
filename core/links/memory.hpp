// Memory peers can map, for the C API (hcomm_mem_alloc / hcomm_mem_free,
// hcomm_mem_register / hcomm_mem_deregister): regions of the memory registry
// that the transport which maps memory made mappable. The API checks its
// arguments; what depends on the registry's state is checked here, and
// errors name the API call.
#pragma once

#include <cstddef>

#include "core/links/links.hpp"

namespace hcomm::links {

// `bytes` of memory that peers map where a loaded transport maps memory,
// else plain page-aligned memory (collectives then copy it).
void* allocate(size_t bytes);
// Memory from allocate() back; it must be registered no more.
void free_allocated(void* ptr);
// A handle for [ptr, ptr + bytes) made mappable by the transport through
// which `links` map memory (plain registered memory where none does); a
// range inside one registered or allocated before shares its region.
void* register_memory(const Links& links, void* ptr, size_t bytes);
void deregister_memory(void* handle);

}  // namespace hcomm::links
