#include "core/device/evict.hpp"

#include <cstdint>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace hcomm::device {

#if defined(__x86_64__)
namespace {

constexpr uintptr_t kLine = 64;

__attribute__((target("clflushopt"))) void flush_lines(const void* data, size_t bytes) {
  const auto* p = static_cast<const char*>(data);
  const auto first = reinterpret_cast<uintptr_t>(p) & ~(kLine - 1);
  for (uintptr_t line = first; line < reinterpret_cast<uintptr_t>(p + bytes); line += kLine)
    __builtin_ia32_clflushopt(reinterpret_cast<void*>(line));
}

bool has_clflushopt() {
  static const bool has = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) && (ebx & bit_CLFLUSHOPT) != 0;
  }();
  return has;
}

}  // namespace

void evict(const void* data, size_t bytes) {
  if (bytes && has_clflushopt()) flush_lines(data, bytes);
}
#else
void evict(const void*, size_t) {}
#endif

}  // namespace hcomm::device
