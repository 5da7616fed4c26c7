// AVX2 kernels: 256-bit vectors, F16C for float16. Compiled for that ISA by a
// target region, so the build needs no -march flag; run only where the CPU
// reports AVX2, FMA and F16C.
#include "core/device/reduce_isa.hpp"

#if defined(__x86_64__)
// Standard headers before the target region: only the kernels take the ISA.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

HCOMM_KERNEL_TARGET_BEGIN("avx2,fma,f16c")
#include "core/device/reduce_kernels.hpp"

namespace hcomm::device {
namespace {

struct Avx2 {
  using Float16Io = Float16InstructionIo<Avx2>;
  static constexpr size_t kVectorBytes = 32;
  static Vec<float, 8> float16_to_float32(Vec<uint16_t, 8> half) {
    return (Vec<float, 8>)_mm256_cvtph_ps((__m128i)half);
  }
  static Vec<uint16_t, 8> float32_to_float16(Vec<float, 8> value) {
    return (Vec<uint16_t, 8>)_mm256_cvtps_ph((__m256)value, _MM_FROUND_TO_NEAREST_INT);
  }
};

constexpr KernelTable kAvx2Kernels = make_kernel_table<Avx2>();

}  // namespace
}  // namespace hcomm::device
HCOMM_KERNEL_TARGET_END

namespace hcomm::device {
const KernelTable* avx2_kernel_table() { return &kAvx2Kernels; }
}  // namespace hcomm::device

#else

namespace hcomm::device {
const KernelTable* avx2_kernel_table() { return nullptr; }
}  // namespace hcomm::device

#endif
