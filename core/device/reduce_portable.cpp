// Portable kernels: 16-byte GCC vectors, which every target lowers to its own
// SIMD (SSE2 on any x86-64, NEON on AArch64) or to scalar code.
#include <cstddef>
#include <cstdint>

#include "core/device/reduce_kernels.hpp"

namespace hcomm::device {
namespace {

struct Portable {
  static constexpr size_t kVectorBytes = 16;
  using Float16Io = PairedIo<Portable, Float16Codec>;
};

constexpr KernelTable kPortableKernels = make_kernel_table<Portable>();

}  // namespace

const KernelTable* portable_kernel_table() { return &kPortableKernels; }

}  // namespace hcomm::device
