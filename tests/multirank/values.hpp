// Inputs whose collective results are exact in every dtype, and the scalar
// reference they are checked against element by element.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "hcomm/hcomm.h"

namespace hcomm::test {

// IEEE binary16 / bfloat16 from float, round to nearest even (reference only).
inline uint16_t to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffff;
  if (((x >> 23) & 0xff) == 0xff) return static_cast<uint16_t>(sign | 0x7c00 | (mant ? 0x200 : 0));
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00);
  if (exp <= 0) {
    if (exp < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000;
    uint32_t shift = static_cast<uint32_t>(14 - exp);
    uint32_t half = mant >> shift, rest = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(exp) << 10) | (mant >> 13), rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) ++half;
  return static_cast<uint16_t>(sign | half);
}

inline float from_half(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float mag = exp == 0 ? std::ldexp(static_cast<float>(mant), -24)
              : exp == 31 ? (mant ? NAN : INFINITY)
                          : std::ldexp(static_cast<float>(mant | 0x400), static_cast<int>(exp) - 25);
  return sign ? -mag : mag;
}

inline uint16_t to_bfloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if (std::isnan(f)) return static_cast<uint16_t>((x >> 16) | 0x40);
  return static_cast<uint16_t>((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

inline float from_bfloat16(uint16_t h) {
  uint32_t x = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

inline bool is_signed(hcomm_dtype_t t) { return t != HCOMM_UINT8 && t != HCOMM_UINT32 && t != HCOMM_UINT64; }
inline bool is_float(hcomm_dtype_t t) { return t >= HCOMM_FLOAT16; }

// Element i of rank r's input: small integers, so that sums stay exact in
// every dtype up to 25 ranks (int8) and products have at most ceil(n/3)
// factors of 2.
inline double input(hcomm_op_t op, hcomm_dtype_t t, int rank, size_t i) {
  switch (op) {
    case HCOMM_PROD: return (rank + i) % 3 == 0 ? 2 : 1;
    case HCOMM_MIN:
    case HCOMM_MAX: return static_cast<double>((rank * 5 + i * 7) % 11) - (is_signed(t) ? 5 : 0);
    default: return static_cast<double>((rank * 7 + i * 3) % 5 + 1);
  }
}

inline double reduce_reference(hcomm_op_t op, hcomm_dtype_t t, int nranks, size_t i) {
  double acc = input(op, t, 0, i);
  for (int r = 1; r < nranks; ++r) {
    double v = input(op, t, r, i);
    acc = op == HCOMM_PROD ? acc * v : op == HCOMM_MIN ? std::min(acc, v) : op == HCOMM_MAX ? std::max(acc, v) : acc + v;
  }
  if (op != HCOMM_AVG) return acc;
  if (!is_float(t)) return std::trunc(acc / nranks);
  if (t == HCOMM_FLOAT64) return acc / nranks;
  float q = static_cast<float>(acc) / static_cast<float>(nranks);
  return t == HCOMM_FLOAT16 ? from_half(to_half(q)) : t == HCOMM_BFLOAT16 ? from_bfloat16(to_bfloat16(q)) : q;
}

inline void store(hcomm_dtype_t t, void* buf, size_t i, double v) {
  switch (t) {
    case HCOMM_INT8: static_cast<int8_t*>(buf)[i] = static_cast<int8_t>(v); break;
    case HCOMM_UINT8: static_cast<uint8_t*>(buf)[i] = static_cast<uint8_t>(v); break;
    case HCOMM_INT32: static_cast<int32_t*>(buf)[i] = static_cast<int32_t>(v); break;
    case HCOMM_UINT32: static_cast<uint32_t*>(buf)[i] = static_cast<uint32_t>(v); break;
    case HCOMM_INT64: static_cast<int64_t*>(buf)[i] = static_cast<int64_t>(v); break;
    case HCOMM_UINT64: static_cast<uint64_t*>(buf)[i] = static_cast<uint64_t>(v); break;
    case HCOMM_FLOAT16: static_cast<uint16_t*>(buf)[i] = to_half(static_cast<float>(v)); break;
    case HCOMM_BFLOAT16: static_cast<uint16_t*>(buf)[i] = to_bfloat16(static_cast<float>(v)); break;
    case HCOMM_FLOAT32: static_cast<float*>(buf)[i] = static_cast<float>(v); break;
    default: static_cast<double*>(buf)[i] = v; break;
  }
}

inline double load(hcomm_dtype_t t, const void* buf, size_t i) {
  switch (t) {
    case HCOMM_INT8: return static_cast<const int8_t*>(buf)[i];
    case HCOMM_UINT8: return static_cast<const uint8_t*>(buf)[i];
    case HCOMM_INT32: return static_cast<const int32_t*>(buf)[i];
    case HCOMM_UINT32: return static_cast<const uint32_t*>(buf)[i];
    case HCOMM_INT64: return static_cast<double>(static_cast<const int64_t*>(buf)[i]);
    case HCOMM_UINT64: return static_cast<double>(static_cast<const uint64_t*>(buf)[i]);
    case HCOMM_FLOAT16: return from_half(static_cast<const uint16_t*>(buf)[i]);
    case HCOMM_BFLOAT16: return from_bfloat16(static_cast<const uint16_t*>(buf)[i]);
    case HCOMM_FLOAT32: return static_cast<const float*>(buf)[i];
    default: return static_cast<const double*>(buf)[i];
  }
}

// AVG of floats may differ from the reference by the rounding of a division
// done by reciprocal; everything else must match exactly.
inline bool matches(hcomm_op_t op, hcomm_dtype_t t, double got, double expected) {
  if (op != HCOMM_AVG || !is_float(t)) return got == expected;
  double rel = t == HCOMM_FLOAT16 ? 1e-3 : t == HCOMM_BFLOAT16 ? 8e-3 : t == HCOMM_FLOAT32 ? 2e-7 : 1e-15;
  return std::fabs(got - expected) <= rel * std::fabs(expected);
}

}  // namespace hcomm::test
