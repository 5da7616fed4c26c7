#include "core/exec/mapped_io.hpp"

#include <sched.h>

namespace hcomm::exec {

MappedIO::MappedIO(int rank, int nranks, uint64_t window_bytes)
    : rank_(rank), nranks_(nranks), window_bytes_(window_bytes), layout_{nranks, window_bytes}, ranks_(nranks) {
  calls_.finished.assign(nranks, 0);
  calls_.buffers.resize(nranks);
}

void MappedIO::attach(int r, uint8_t* base, uint64_t bytes) {
  const uint64_t data = window::Layout{nranks_, bytes}.data_offset();
  ranks_[r].base = base;
  ranks_[r].half = {base + data, base + data + bytes};
}

void MappedIO::sleep(int64_t timeout_us) {
  const std::atomic<uint64_t>* awaited = calls_.awaited;
  if (!awaited) return;
  const uint64_t value = calls_.awaited_value;
  window::sleep(header(rank_), timeout_us,
                [&] { return awaited->load(std::memory_order_acquire) >= value; });
}

bool MappedIO::spin(int looks) const {
  const std::atomic<uint64_t>* awaited = calls_.awaited;
  if (!awaited) return false;
  for (int i = 0; i < looks; ++i) {
    if (awaited->load(std::memory_order_acquire) >= calls_.awaited_value) return true;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  return false;
}

bool MappedIO::shares_cpu() {
  const int cpu = sched_getcpu();
  header(rank_).cpu.store(cpu, std::memory_order_relaxed);
  if (cpu < 0) return false;
  for (int r = 0; r < nranks_; ++r)
    if (r != rank_ && header(r).cpu.load(std::memory_order_relaxed) == cpu) return true;
  return false;
}

}  // namespace hcomm::exec
