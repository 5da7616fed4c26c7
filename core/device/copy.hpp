// Copies of the CPU device: the library's memcpy, which keeps its speed at
// every alignment of the two buffers (hcomm/plugin/copy.hpp).
#pragma once

#include <cstddef>

#include "hcomm/plugin/copy.hpp"

namespace hcomm::device {

inline void copy(void* dst, const void* src, size_t bytes) {
  if (dst != src && bytes) plugin::copy_bytes(dst, src, bytes);
}

}  // namespace hcomm::device
