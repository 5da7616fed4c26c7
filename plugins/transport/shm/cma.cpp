#include "cma.hpp"

#include <sys/uio.h>

#include <cerrno>

namespace hcomm::shm {

int cma_read(pid_t pid, uint64_t remote_address, void* local, size_t bytes) {
  size_t done = 0;
  while (done < bytes) {
    iovec to{.iov_base = static_cast<char*>(local) + done, .iov_len = bytes - done};
    iovec from{.iov_base = reinterpret_cast<void*>(remote_address + done), .iov_len = bytes - done};
    ssize_t n = ::process_vm_readv(pid, &to, 1, &from, 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EFAULT;  // a partial read that cannot go on
    done += static_cast<size_t>(n);
  }
  return 0;
}

}  // namespace hcomm::shm
