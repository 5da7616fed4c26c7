// Reduction kernels of the CPU device: the hot loop of every reducing
// collective, vectorised to reach memory bandwidth.
#pragma once

#include <cstddef>
#include <cstdint>

#include "hcomm/types.h"

namespace hcomm::device {

// How results are written. Streamed (non-temporal) stores go to memory
// without reading each line into the cache first: a third less traffic when
// the data is larger than the cache anyway, slower when it would have stayed.
enum class Stores { kCached, kStreamed };

// dst[i] = a[i] op b[i] for i < count. dst may be a or b (same address), but
// must not otherwise overlap them. Integers wrap on overflow. Float MIN/MAX
// propagate NaN and order -0 below +0. AVG sums; when avg_divisor > 1 the
// result is also divided by it in the same pass (integers: the wrapped sum,
// truncating).
void reduce(hcomm_dtype_t dtype, hcomm_op_t op, void* dst, const void* a, const void* b, size_t count, int avg_divisor,
            Stores stores = Stores::kCached);

struct UserOp;

// What a call combines its elements with: the built-in op's kernel for
// dtype, or, where `user` is set, that user op (user_op.hpp).
struct Reduction {
  hcomm_dtype_t dtype;
  hcomm_op_t op;
  size_t elem_bytes;
  const UserOp* user = nullptr;
};

// dst[i] = a[i] op b[i], as above, by r's kernel or user op.
void reduce(const Reduction& r, void* dst, const void* a, const void* b, size_t count, int avg_divisor,
            Stores stores = Stores::kCached);

// The stores for a result of `bytes` written in one call: streamed from
// HCOMM_STREAM_STORES on (auto: twice this CPU's per-core L2 cache).
Stores stores_for(uint64_t bytes);

// dst[i] /= divisor, for AVG results produced without a final reduction.
void divide(hcomm_dtype_t dtype, void* dst, size_t count, int divisor);

// IEEE binary16 and bfloat16 conversions, round to nearest even; NaN stays NaN.
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
float bfloat16_to_float(uint16_t h);
uint16_t float_to_bfloat16(float f);

}  // namespace hcomm::device
