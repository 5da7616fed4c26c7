#include "core/exec/window.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <climits>
#include <new>

#include "core/common/error.hpp"

namespace hcomm::exec::window {

void initialise(void* base, const Layout& layout, int rank) {
  auto* h = new (base) Header{};
  h->version = kVersion;
  h->rank = rank;
  h->nranks = layout.nranks;
  h->window_bytes = layout.window_bytes;
  h->cpu.store(-1, std::memory_order_relaxed);
  auto* bytes = static_cast<uint8_t*>(base);
  for (uint64_t lap = 0; lap < kLaps; ++lap)
    for (int w = 0; w < layout.nranks; ++w)
      for (uint32_t m = 0; m < HCOMM_MAX_SIGNALS; ++m) new (bytes + layout.flag_offset(w, m, lap)) FlagLine{};
  std::atomic_ref<uint64_t>(h->magic).store(kMagic, std::memory_order_release);
}

void check(const void* base, const Layout& layout, int rank, size_t mapped_bytes) {
  const auto* h = static_cast<const Header*>(base);
  if (mapped_bytes < sizeof(Header) ||
      std::atomic_ref<const uint64_t>(h->magic).load(std::memory_order_acquire) != kMagic ||
      h->version != kVersion)
    HCOMM_THROW(HCOMM_ERR_REMOTE, "the window of rank %d is not an HComm window of version %u: use the same HComm "
                "build on every rank", rank, kVersion);
  if (h->rank != rank || h->nranks != layout.nranks || Layout{layout.nranks, h->window_bytes}.total_bytes() > mapped_bytes)
    HCOMM_THROW(HCOMM_ERR_REMOTE, "the window of rank %d describes rank %d of %d ranks (%llu bytes): it belongs to "
                "another communicator", rank, h->rank, h->nranks, static_cast<unsigned long long>(h->window_bytes));
}

void ring(Header& owner) {
  owner.bell.fetch_add(1, std::memory_order_seq_cst);
  ::syscall(SYS_futex, &owner.bell, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

void sleep_on_bell(Header& own, uint32_t seen, int64_t timeout_us) {
  timespec t{.tv_sec = timeout_us / 1'000'000, .tv_nsec = (timeout_us % 1'000'000) * 1000};
  ::syscall(SYS_futex, &own.bell, FUTEX_WAIT, seen, &t, nullptr, 0);
}

}  // namespace hcomm::exec::window
