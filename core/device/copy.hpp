// Copies of the CPU device: the library's memcpy, which picks vector and
// non-temporal stores by size for this CPU.
#pragma once

#include <cstddef>
#include <cstring>

namespace hcomm::device {

inline void copy(void* dst, const void* src, size_t bytes) {
  if (dst != src && bytes) std::memcpy(dst, src, bytes);
}

}  // namespace hcomm::device
