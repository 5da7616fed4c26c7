// Buffers that peers cannot map, registered by the core when calls use them
// again, only where the caller set HCOMM_AUTO_REGISTER (off by default): what
// XPMEM gives MPI libraries, done with the transport's registration, which
// moves the pages onto shared memory in place. That changes the caller's
// memory (madvise(MADV_DONTNEED) keeps a shared page's data, and allocators
// take purged memory to be zero), hence only on request. A buffer's range is
// registered on its second use; every later call
// asks the transport whether the registration still holds its pages (the
// caller may have freed the buffer and got new memory at the same address)
// and registers it anew when not. A range whose registration did not last a
// few calls is not tried again, and nothing is registered while the process
// has pinned memory (VmPin: RDMA registrations) or has the CUDA driver loaded
// (cudaHostRegister pins pages unseen): pages a device writes must not move.
// Registrations of freed buffers are dropped before each new one and every
// kSweepEvery calls (their files would keep the memory), and at most
// kMaxRegistrations are kept.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

#include "core/transport/transport.hpp"

namespace hcomm::links {

class AutoRegistry {
 public:
  static AutoRegistry& instance();

  // *out describes [ptr, ptr + bytes) for peers when `t` registered it here,
  // now or before; out->bytes is 0 otherwise.
  void describe(const transport::Transport& t, const void* ptr, size_t bytes, hcomm_mem_desc_t* out);
  // Unregisters every automatic registration that overlaps [ptr, ptr + bytes)
  // (its pages go back to private memory): the caller registers it itself.
  void release_overlapping(const void* ptr, size_t bytes);

 private:
  struct Registration {
    size_t bytes;
    const transport::Transport* transport;
    void* handle;
    hcomm_mem_desc_t desc;
    uint64_t uses;
    uint64_t last;  // clock_ at the last call that used it
  };
  // A range seen in a call; refused ones are not registered.
  struct Sighting {
    uintptr_t start = 0;
    size_t bytes = 0;
    uint64_t last = 0;
    bool refused = false;
  };
  static constexpr int kSightings = 16;
  // Registrations that did not last this many calls were a waste.
  static constexpr uint64_t kPaysOffAfter = 4;
  // Registrations kept; beyond, the least recently used goes.
  static constexpr size_t kMaxRegistrations = 64;
  static constexpr uint64_t kSweepEvery = 256;

  using Registrations = std::map<uintptr_t, Registration>;  // by buffer start
  bool held(Registrations::iterator r);
  Registrations::iterator release(Registrations::iterator r);
  Registrations::iterator forget(Registrations::iterator r);
  void release_overlapping_locked(uintptr_t start, size_t bytes);
  void sweep();
  Sighting& sighting(uintptr_t start, size_t bytes);
  void enroll(const transport::Transport& t, uintptr_t start, size_t bytes, hcomm_mem_desc_t* out);

  std::mutex mutex_;
  Registrations registrations_;
  Sighting sightings_[kSightings];
  uint64_t clock_ = 0;
  bool unsupported_ = false;  // the transport cannot tell whether a registration holds
};

}  // namespace hcomm::links
