#include "cma.hpp"

#include <sys/uio.h>

#include <cerrno>

namespace hcomm::shm {

namespace {

// Partial transfers go on where they stopped.
template <class Transfer>
int cma_copy(uint64_t remote_address, void* local, size_t bytes, Transfer transfer) {
  size_t done = 0;
  while (done < bytes) {
    iovec here{.iov_base = static_cast<char*>(local) + done, .iov_len = bytes - done};
    iovec there{.iov_base = reinterpret_cast<void*>(remote_address + done), .iov_len = bytes - done};
    ssize_t n = transfer(&here, &there);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EFAULT;  // a partial transfer that cannot go on
    done += static_cast<size_t>(n);
  }
  return 0;
}

}  // namespace

int cma_read(pid_t pid, uint64_t remote_address, void* local, size_t bytes) {
  return cma_copy(remote_address, local, bytes,
                  [&](const iovec* here, const iovec* there) { return ::process_vm_readv(pid, here, 1, there, 1, 0); });
}

int cma_write(pid_t pid, uint64_t remote_address, const void* local, size_t bytes) {
  return cma_copy(remote_address, const_cast<void*>(local), bytes, [&](const iovec* here, const iovec* there) {
    return ::process_vm_writev(pid, here, 1, there, 1, 0);
  });
}

}  // namespace hcomm::shm
