// Cross-memory attach: one copy straight from or into another process's
// memory (process_vm_readv / process_vm_writev). The kernel allows it where
// ptrace would be allowed; Yama, seccomp profiles and non-dumpable processes
// may forbid it (EPERM).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace hcomm::shm {

// Reads `bytes` at `remote_address` in process `pid` into `local`; returns 0
// or the errno of the failure.
int cma_read(pid_t pid, uint64_t remote_address, void* local, size_t bytes);
// Writes `bytes` from `local` to `remote_address` in process `pid`; the same.
int cma_write(pid_t pid, uint64_t remote_address, const void* local, size_t bytes);

}  // namespace hcomm::shm
