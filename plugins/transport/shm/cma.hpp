// Cross-memory attach: one copy straight from or into another process's
// memory (process_vm_readv / process_vm_writev). The kernel allows it where
// ptrace would be allowed; Yama, seccomp profiles and non-dumpable processes
// may forbid it (EPERM).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "hcomm/plugin/copy.hpp"

namespace hcomm::shm {

// The copies of one net. The kernel copies with `rep movsb`, which AMD's CPUs
// run several times slower when the destination lies a few bytes past the
// source within a page (hcomm/plugin/copy.hpp). Such copies go through a
// bounce buffer at the remote side's offset within a page, in cache-sized
// pieces, and on from there with a copy that keeps its speed.
class CrossMemory {
 public:
  // `bounce`: bounce short distances (by default where this CPU copies them slowly).
  explicit CrossMemory(bool bounce = plugin::short_distance_is_slow()) : bounce_short_(bounce) {}

  // Reads `bytes` at `remote_address` in process `pid` into `local`; returns
  // 0 or the errno of the failure.
  int read(pid_t pid, uint64_t remote_address, void* local, size_t bytes) {
    return copy(pid, remote_address, local, bytes, true);
  }
  // Writes `bytes` from `local` to `remote_address` in process `pid`; the same.
  int write(pid_t pid, uint64_t remote_address, const void* local, size_t bytes) {
    return copy(pid, remote_address, const_cast<void*>(local), bytes, false);
  }

 private:
  int copy(pid_t pid, uint64_t remote_address, void* local, size_t bytes, bool reading);
  // Where a piece for `remote_address` lands at the same offset within a
  // page; null when the bounce buffer cannot be allocated.
  unsigned char* bounce_for(uint64_t remote_address);

  bool bounce_short_;
  std::unique_ptr<unsigned char, decltype(&std::free)> bounce_{nullptr, &std::free};
};

}  // namespace hcomm::shm
