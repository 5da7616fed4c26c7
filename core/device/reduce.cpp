// The CPU reduction entry points: argument checks, then the best kernel table
// for this CPU, picked once.
#include "core/device/reduce.hpp"

#include <unistd.h>

#include <cstdint>
#include <limits>
#include <string>

#include "core/common/error.hpp"
#include "core/common/settings.hpp"
#include "core/device/float16.hpp"
#include "core/device/reduce_isa.hpp"
#include "core/device/user_op.hpp"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace hcomm::device {
namespace {

#if defined(__x86_64__)
// Not every compiler's __builtin_cpu_supports knows F16C; CPUID leaf 1 does.
bool cpu_has_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
}
#endif

bool cpu_runs(Isa isa) {
#if defined(__x86_64__)
  __builtin_cpu_init();  // may run before the constructors that would call it
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && cpu_has_f16c();
  switch (isa) {
    case Isa::kPortable:
      return true;
    case Isa::kAvx2:
      return avx2;
    case Isa::kAvx512:
      return avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  }
  return false;
#else
  return isa == Isa::kPortable;
#endif
}

const KernelTable* compiled_table(Isa isa) {
  switch (isa) {
    case Isa::kPortable:
      return portable_kernel_table();
    case Isa::kAvx2:
      return avx2_kernel_table();
    case Isa::kAvx512:
      return avx512_kernel_table();
  }
  return nullptr;
}

const KernelTable& best_kernels() {
  static const KernelTable* const best = kernels_for(best_isa());
  return *best;
}

void check_dtype(const char* function, hcomm_dtype_t dtype) {
  if (static_cast<unsigned>(dtype) >= HCOMM_NUM_DTYPES)
    HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                "%s: dtype %d is not an hcomm_dtype_t; pass one of HCOMM_INT8..HCOMM_FLOAT64", function,
                static_cast<int>(dtype));
}

// Bytes of `count` elements; the range must exist in memory.
size_t checked_bytes(const char* function, size_t element_bytes, size_t count) {
  size_t bytes = 0;  // a multiplication with a check rather than a division: this runs on every call
  if (__builtin_mul_overflow(count, element_bytes, &bytes))
    HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT, "%s: count %zu elements of %zu bytes overflows the address space", function,
                count, element_bytes);
  return bytes;
}

void check_buffer(const char* function, const char* name, const void* buffer) {
  if (buffer == nullptr)
    HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT, "%s: %s is null with a count above 0; pass a buffer of count elements",
                function, name);
}

// dst may be a source exactly; a partial overlap would read results as inputs.
void check_no_partial_overlap(const char* name, const void* dst, const void* src, size_t bytes) {
  const auto d = reinterpret_cast<uintptr_t>(dst);
  const auto s = reinterpret_cast<uintptr_t>(src);
  if (d != s && d < s + bytes && s < d + bytes)
    HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                "reduce: dst %p overlaps %s %p over %zu bytes without being equal to it; pass dst == %s or a "
                "separate buffer",
                dst, name, src, bytes, name);
}

}  // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::kPortable:
      return "portable";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
  }
  return "unknown";
}

const KernelTable* kernels_for(Isa isa) { return cpu_runs(isa) ? compiled_table(isa) : nullptr; }

Isa best_isa() {
  Isa best = Isa::kPortable;
  for (Isa isa : kAllIsas)
    if (kernels_for(isa) != nullptr) best = isa;
  return best;
}

void reduce_with(const KernelTable& kernels, hcomm_dtype_t dtype, hcomm_op_t op, void* dst, const void* a,
                 const void* b, size_t count, int avg_divisor, Stores stores) {
  check_dtype("reduce", dtype);
  if (static_cast<unsigned>(op) >= HCOMM_NUM_OPS)
    HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT, "reduce: op %d is not an hcomm_op_t; pass one of HCOMM_SUM..HCOMM_AVG",
                static_cast<int>(op));
  if (avg_divisor < 0)
    HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT, "reduce: avg_divisor %d is negative; pass the rank count, or 0 for none",
                avg_divisor);
  if (count == 0) return;
  check_buffer("reduce", "dst", dst);
  check_buffer("reduce", "a", a);
  check_buffer("reduce", "b", b);
  const size_t bytes = checked_bytes("reduce", kernels.element_bytes[dtype], count);
  check_no_partial_overlap("a", dst, a, bytes);
  check_no_partial_overlap("b", dst, b, bytes);
  // Without a divisor the division comes later, by divide(); by 1 it changes nothing.
  if (op == HCOMM_AVG && avg_divisor <= 1) op = HCOMM_SUM;
  kernels.reduce[dtype][op](dst, a, b, count, avg_divisor, stores == Stores::kStreamed);
}

void divide_with(const KernelTable& kernels, hcomm_dtype_t dtype, void* dst, size_t count, int divisor) {
  check_dtype("divide", dtype);
  if (divisor <= 0)
    HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT, "divide: divisor %d is not positive; pass the rank count", divisor);
  if (count == 0) return;
  check_buffer("divide", "dst", dst);
  checked_bytes("divide", kernels.element_bytes[dtype], count);
  if (divisor > 1) kernels.divide[dtype](dst, count, divisor);  // by 1 it changes nothing
}

void reduce(hcomm_dtype_t dtype, hcomm_op_t op, void* dst, const void* a, const void* b, size_t count, int avg_divisor,
            Stores stores) {
  reduce_with(best_kernels(), dtype, op, dst, a, b, count, avg_divisor, stores);
}

void reduce(const Reduction& r, void* dst, const void* a, const void* b, size_t count, int avg_divisor, Stores stores) {
  if (r.user) return reduce_user(*r.user, r.dtype, r.elem_bytes, dst, a, b, count);
  reduce(r.dtype, r.op, dst, a, b, count, avg_divisor, stores);
}

// Streamed stores pay for results too large to stay in the caches, and slow
// down those that would: by default they start at twice the per-core L2.
Stores stores_for(uint64_t bytes) {
  static const uint64_t threshold = [] {
    const std::string text = settings::get_string("HCOMM_STREAM_STORES");
    uint64_t given = 0;
    if (text == "off") return std::numeric_limits<uint64_t>::max();
    if (text != "auto" && settings::parse_size(text, &given)) return given;
    const long l2 = ::sysconf(_SC_LEVEL2_CACHE_SIZE);
    return l2 > 0 ? 2 * static_cast<uint64_t>(l2) : uint64_t{4} << 20;
  }();
  return bytes >= threshold ? Stores::kStreamed : Stores::kCached;
}

void divide(hcomm_dtype_t dtype, void* dst, size_t count, int divisor) {
  divide_with(best_kernels(), dtype, dst, count, divisor);
}

float half_to_float(uint16_t h) { return float16_to_float32<1>(Vec<uint32_t, 1>{h})[0]; }
uint16_t float_to_half(float f) { return static_cast<uint16_t>(float32_to_float16<1>(Vec<float, 1>{f})[0]); }
float bfloat16_to_float(uint16_t h) { return bfloat16_to_float32<1>(Vec<uint32_t, 1>{h})[0]; }
uint16_t float_to_bfloat16(float f) { return static_cast<uint16_t>(float32_to_bfloat16<1>(Vec<float, 1>{f})[0]); }

}  // namespace hcomm::device
