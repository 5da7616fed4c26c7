// Copies of the CPU device: the library's memcpy, which keeps its speed at
// every alignment of the two buffers (hcomm/plugin/copy.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "hcomm/plugin/copy.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace hcomm::device {

inline void copy(void* dst, const void* src, size_t bytes) {
  if (dst != src && bytes) plugin::copy_bytes(dst, src, bytes);
}

// A copy whose destination goes to memory without passing through this
// core's caches (non-temporal stores, where x86 has them; else memcpy), for
// data another core reads next: a line left in this core's cache would have
// to travel from it to the reader's, which across last-level caches is
// slower than memory, and to be taken back before this core writes it again.
inline void copy_past_caches(void* dst, const void* src, size_t bytes) {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  size_t i = 0;
#if defined(__SSE2__)
  const size_t head = (64 - (reinterpret_cast<uintptr_t>(d) & 63)) & 63;
  if (bytes >= head + 64) {
    std::memcpy(d, s, head);
    for (i = head; i + 64 <= bytes; i += 64)
      for (size_t v = 0; v < 64; v += 16)
        _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + v),
                         _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + v)));
    _mm_sfence();  // before the signal that tells the reader
  }
#endif
  std::memcpy(d + i, s + i, bytes - i);
}

}  // namespace hcomm::device
