// The reduction kernels come in one table per instruction set; reduce.cpp
// runs the best one the CPU supports, chosen once. Every table computes the
// same bits, so ranks on different CPUs agree. Private to the device layer,
// its tests and its benchmark.
#pragma once

#include <cstddef>

#include "core/device/reduce.hpp"
#include "hcomm/types.h"

namespace hcomm::device {

enum class Isa { kPortable, kAvx2, kAvx512 };
// From the slowest to the fastest.
inline constexpr Isa kAllIsas[] = {Isa::kPortable, Isa::kAvx2, Isa::kAvx512};

// dst[i] = a[i] op b[i]; the AVG entries divide by avg_divisor, which must be
// at least 2 (reduce_with turns AVG by 0 or 1 into SUM). `stream`: store the
// results non-temporally where aligned (device::Stores).
using ReduceKernel = void (*)(void* dst, const void* a, const void* b, size_t count, int avg_divisor, bool stream);
// dst[i] /= divisor, divisor at least 2 (divide_with skips 1).
using DivideKernel = void (*)(void* dst, size_t count, int divisor);

struct KernelTable {
  ReduceKernel reduce[HCOMM_NUM_DTYPES][HCOMM_NUM_OPS];
  DivideKernel divide[HCOMM_NUM_DTYPES];
  size_t element_bytes[HCOMM_NUM_DTYPES];
};

const char* isa_name(Isa isa);
// The kernels of `isa`, or null where this build (another architecture) or
// this CPU lacks that instruction set.
const KernelTable* kernels_for(Isa isa);
// The fastest instruction set this CPU runs.
Isa best_isa();

// reduce() and divide() of reduce.hpp, with the same argument checks, on the
// given table (reduce.hpp's run the best ISA's).
void reduce_with(const KernelTable& kernels, hcomm_dtype_t dtype, hcomm_op_t op, void* dst, const void* a,
                 const void* b, size_t count, int avg_divisor, Stores stores = Stores::kCached);
void divide_with(const KernelTable& kernels, hcomm_dtype_t dtype, void* dst, size_t count, int divisor);

// One translation unit per instruction set defines its table; null where that
// unit is not built for this architecture. Callers check the CPU first.
const KernelTable* portable_kernel_table();
const KernelTable* avx2_kernel_table();
const KernelTable* avx512_kernel_table();

}  // namespace hcomm::device

// Compiles what follows, up to HCOMM_KERNEL_TARGET_END, for an instruction set
// given as a target string ("avx2,fma"), without any -march flag.
#define HCOMM_KERNEL_PRAGMA(...) _Pragma(#__VA_ARGS__)
#if defined(__clang__)
#define HCOMM_KERNEL_TARGET_BEGIN(isa) \
  HCOMM_KERNEL_PRAGMA(clang attribute push(__attribute__((target(isa))), apply_to = function))
#define HCOMM_KERNEL_TARGET_END HCOMM_KERNEL_PRAGMA(clang attribute pop)
#else
#define HCOMM_KERNEL_TARGET_BEGIN(isa) HCOMM_KERNEL_PRAGMA(GCC push_options) HCOMM_KERNEL_PRAGMA(GCC target(isa))
#define HCOMM_KERNEL_TARGET_END HCOMM_KERNEL_PRAGMA(GCC pop_options)
#endif
