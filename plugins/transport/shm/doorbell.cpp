#include "doorbell.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <climits>

namespace hcomm::shm {

namespace {

// The doorbell lives in shared memory, so these are shared (not private) futexes.
uint32_t* futex_word(std::atomic<uint32_t>& a) { return reinterpret_cast<uint32_t*>(&a); }

}  // namespace

void Doorbell::ring() {
  if (!header_.sleeping.load(std::memory_order_seq_cst)) return;
  header_.doorbell.fetch_add(1, std::memory_order_release);
  ::syscall(SYS_futex, futex_word(header_.doorbell), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

void Doorbell::sleep(const std::function<bool()>& work_ready, int64_t timeout_us) {
  const uint32_t seen = header_.doorbell.load(std::memory_order_acquire);
  header_.sleeping.store(1, std::memory_order_seq_cst);
  if (!work_ready()) {
    timespec timeout{.tv_sec = timeout_us / 1000000, .tv_nsec = timeout_us % 1000000 * 1000};
    // Returns at once if the doorbell rang since `seen` was read (EAGAIN).
    ::syscall(SYS_futex, futex_word(header_.doorbell), FUTEX_WAIT, seen, &timeout, nullptr, 0);
  }
  header_.sleeping.store(0, std::memory_order_relaxed);
}

}  // namespace hcomm::shm
