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

}  // namespace

unsigned char* CrossMemory::bounce_for(uint64_t remote_address) {
  if (!bounce_)
    bounce_.reset(
        static_cast<unsigned char*>(std::aligned_alloc(plugin::kPageBytes, kBouncePiece + plugin::kPageBytes)));
  return bounce_ ? bounce_.get() + (remote_address & (plugin::kPageBytes - 1)) : nullptr;
}

int CrossMemory::copy(pid_t pid, uint64_t remote_address, void* local, size_t bytes, bool reading) {
  const auto transfer = [&](const iovec* here, const iovec* there) {
    return reading ? ::process_vm_readv(pid, here, 1, there, 1, 0) : ::process_vm_writev(pid, here, 1, there, 1, 0);
  };
  const void* remote = reinterpret_cast<const void*>(remote_address);
  const bool short_distance = reading ? plugin::short_distance(local, remote) : plugin::short_distance(remote, local);
  if (!bounce_short_ || bytes < kBounceFrom || !short_distance || !bounce_for(remote_address))
    return cma_copy(remote_address, local, bytes, transfer);
  auto* here = static_cast<unsigned char*>(local);
  for (size_t done = 0; done < bytes;) {
    const size_t n = std::min(kBouncePiece, bytes - done);
    unsigned char* bounce = bounce_for(remote_address + done);
    if (!reading) plugin::copy_blocks(bounce, here + done, n);
    if (const int err = cma_copy(remote_address + done, bounce, n, transfer)) return err;
    if (reading) plugin::copy_blocks(here + done, bounce, n);
    done += n;
  }
  return 0;
}

}  // namespace hcomm::shm
