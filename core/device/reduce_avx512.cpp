// AVX-512 kernels: 512-bit vectors for every lane width (AVX512BW) and 16
// float16 conversions per instruction. Compiled for that ISA by a target
// region, so the build needs no -march flag; run only where the CPU reports
// AVX512 F, BW, DQ and VL.
#include "core/device/reduce_isa.hpp"

#if defined(__x86_64__)
// Standard headers before the target region: only the kernels take the ISA.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

HCOMM_KERNEL_TARGET_BEGIN("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,f16c")
#include "core/device/reduce_kernels.hpp"

namespace hcomm::device {
namespace {

// The zero-masked conversions with every lane selected: GCC 12 wrongly warns
// about the undefined source of the unmasked ones (GCC bug 105593).
struct Avx512 {
  using Float16Io = Float16InstructionIo<Avx512>;
  static constexpr size_t kVectorBytes = 64;
  static constexpr __mmask16 kAllLanes = 0xffff;
  static Vec<float, 16> float16_to_float32(Vec<uint16_t, 16> half) {
    return (Vec<float, 16>)_mm512_maskz_cvtph_ps(kAllLanes, (__m256i)half);
  }
  static Vec<uint16_t, 16> float32_to_float16(Vec<float, 16> value) {
    return (Vec<uint16_t, 16>)_mm512_maskz_cvtps_ph(kAllLanes, (__m512)value, _MM_FROUND_TO_NEAREST_INT);
  }
  // The first n bytes (fewer than the vector's) at p, the rest zero; masked
  // bytes are not accessed, so the vector may reach past the buffer.
  template <class V>
  static V load_first(const void* p, size_t n) {
    const uint64_t mask = (uint64_t{1} << n) - 1;
    if constexpr (sizeof(V) == 64)
      return (V)_mm512_maskz_loadu_epi8(mask, p);
    else if constexpr (sizeof(V) == 32)
      return (V)_mm256_maskz_loadu_epi8(static_cast<__mmask32>(mask), p);
    else
      return (V)_mm_maskz_loadu_epi8(static_cast<__mmask16>(mask), p);
  }
  template <class V>
  static void store_first(void* p, V v, size_t n) {
    const uint64_t mask = (uint64_t{1} << n) - 1;
    if constexpr (sizeof(V) == 64)
      _mm512_mask_storeu_epi8(p, mask, (__m512i)v);
    else if constexpr (sizeof(V) == 32)
      _mm256_mask_storeu_epi8(p, static_cast<__mmask32>(mask), (__m256i)v);
    else
      _mm_mask_storeu_epi8(p, static_cast<__mmask16>(mask), (__m128i)v);
  }
};

constexpr KernelTable kAvx512Kernels = make_kernel_table<Avx512>();

}  // namespace
}  // namespace hcomm::device
HCOMM_KERNEL_TARGET_END

namespace hcomm::device {
const KernelTable* avx512_kernel_table() { return &kAvx512Kernels; }
}  // namespace hcomm::device

#else

namespace hcomm::device {
const KernelTable* avx512_kernel_table() { return nullptr; }
}  // namespace hcomm::device

#endif
