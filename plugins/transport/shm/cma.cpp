#include "cma.hpp"

#include <sys/uio.h>

#include <algorithm>
#include <cerrno>

#include "hcomm/plugin/copy.hpp"

namespace hcomm::shm {

namespace {

// Pieces small enough that the copy on reads them from the cache; copies
// shorter than kBounceFrom go straight, the system call outweighing the rest.
constexpr size_t kBouncePiece = 256 << 10;
constexpr size_t kBounceFrom = 4096;

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

const void* as_pointer(uint64_t address) { return reinterpret_cast<const void*>(address); }

}  // namespace

unsigned char* CrossMemory::bounce_for(uint64_t remote_address) {
  if (!bounce_)
    bounce_.reset(
        static_cast<unsigned char*>(std::aligned_alloc(plugin::kPageBytes, kBouncePiece + plugin::kPageBytes)));
  return bounce_ ? bounce_.get() + (remote_address & (plugin::kPageBytes - 1)) : nullptr;
}

int CrossMemory::read(pid_t pid, uint64_t remote_address, void* local, size_t bytes) {
  const auto readv = [&](const iovec* here, const iovec* there) {
    return ::process_vm_readv(pid, here, 1, there, 1, 0);
  };
  if (!bounce_short_ || bytes < kBounceFrom || !plugin::short_distance(local, as_pointer(remote_address)) ||
      !bounce_for(remote_address))
    return cma_copy(remote_address, local, bytes, readv);
  for (size_t done = 0; done < bytes;) {
    const size_t n = std::min(kBouncePiece, bytes - done);
    unsigned char* bounce = bounce_for(remote_address + done);
    if (const int err = cma_copy(remote_address + done, bounce, n, readv)) return err;
    plugin::copy_blocks(static_cast<unsigned char*>(local) + done, bounce, n);
    done += n;
  }
  return 0;
}

int CrossMemory::write(pid_t pid, uint64_t remote_address, const void* local, size_t bytes) {
  const auto writev = [&](const iovec* here, const iovec* there) {
    return ::process_vm_writev(pid, here, 1, there, 1, 0);
  };
  if (!bounce_short_ || bytes < kBounceFrom || !plugin::short_distance(as_pointer(remote_address), local) ||
      !bounce_for(remote_address))
    return cma_copy(remote_address, const_cast<void*>(local), bytes, writev);
  for (size_t done = 0; done < bytes;) {
    const size_t n = std::min(kBouncePiece, bytes - done);
    unsigned char* bounce = bounce_for(remote_address + done);
    plugin::copy_blocks(bounce, static_cast<const unsigned char*>(local) + done, n);
    if (const int err = cma_copy(remote_address + done, bounce, n, writev)) return err;
    done += n;
  }
  return 0;
}

}  // namespace hcomm::shm
