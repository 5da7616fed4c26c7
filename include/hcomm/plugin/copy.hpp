// Byte copies that keep their speed whatever the two buffers' alignment
// (header only, optional; the core's copies use it too). On x86, memcpy and
// the kernel copy large blocks with `rep movsb`, which AMD's CPUs run several
// times slower when the destination lies a few bytes past the source modulo
// 4 KiB; Intel's copy alike at every distance. A page-aligned buffer and a
// malloc'd one (16 bytes into a page) are such a pair.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace hcomm::plugin {

inline constexpr uintptr_t kPageBytes = 4096;
// Distances (destination past source, modulo a page) that `rep movsb` may run
// slowly at: up to a cache line.
inline constexpr uintptr_t kShortDistance = 64;

inline bool short_distance(const void* dst, const void* src) {
  const uintptr_t d = (reinterpret_cast<uintptr_t>(dst) - reinterpret_cast<uintptr_t>(src)) & (kPageBytes - 1);
  return d != 0 && d < kShortDistance;
}

// Whether this CPU copies short distances slowly: AMD's.
inline bool short_distance_is_slow() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool slow = [] {
    __builtin_cpu_init();
    return __builtin_cpu_is("amd") != 0;
  }();
  return slow;
#else
  return false;
#endif
}

// A copy from src to dst that memcpy's `rep movsb` would slow down here.
inline bool slow_distance(const void* dst, const void* src) {
  return short_distance(dst, src) && short_distance_is_slow();
}

// memcpy (the buffers do not overlap) through 64-byte blocks of vector loads
// and stores, which keep their speed at every distance.
inline void copy_blocks(void* dst, const void* src, size_t bytes) {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  size_t i = 0;
#if defined(__SSE2__)
  for (; i + 64 <= bytes; i += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 32));
    const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 48));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), a);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i + 16), b);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i + 32), c);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i + 48), e);
  }
#endif
  std::memcpy(d + i, s + i, bytes - i);  // under 64 bytes with SSE2: no rep movsb
}

// memcpy (the buffers do not overlap), through copy_blocks where this CPU
// would copy the distance slowly.
inline void copy_bytes(void* dst, const void* src, size_t bytes) {
  if (slow_distance(dst, src))
    copy_blocks(dst, src, bytes);
  else
    std::memcpy(dst, src, bytes);
}

}  // namespace hcomm::plugin
