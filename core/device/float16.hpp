// IEEE binary16 and bfloat16 <-> binary32 conversions, written once for GCC
// vectors of any lane count: the kernels convert whole vectors with them where
// the CPU has no conversion instruction, the scalar API converts one lane.
// A 16-bit encoding travels in the low half of a 32-bit lane. Integer and
// exact float arithmetic only, so every ISA and lane count gives the same bits
// as x86 F16C: round to nearest even, subnormals kept, overflow to infinity,
// NaN stays NaN with its quiet bit set and its payload truncated.
//
// Everything is in an unnamed namespace: a kernel translation unit includes
// this after its target pragma and so gets code for its own ISA, which the
// linker must never merge with another ISA's.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hcomm::device {
namespace {

template <class T, size_t N>
struct VecOf {
  typedef T type __attribute__((vector_size(sizeof(T) * N)));
};
// N lanes of T, as one GCC vector.
template <class T, size_t N>
using Vec = typename VecOf<T, N>::type;

template <size_t N>
Vec<float, N> float16_to_float32(Vec<uint32_t, N> half) {
  using U = Vec<uint32_t, N>;
  const U sign = (half & 0x8000) << 16;
  const U exponent = (half >> 10) & 0x1f;
  const U mantissa = half & 0x3ff;
  const U normal = ((exponent + (127 - 15)) << 23) | (mantissa << 13);
  const U quiet_bit = (U)(mantissa != 0) & 0x400000;
  const U inf_or_nan = 0x7f800000 | quiet_bit | (mantissa << 13);
  // Zero and subnormals: mantissa * 2^-24, exact in float.
  const Vec<float, N> small = __builtin_convertvector((Vec<int32_t, N>)mantissa, Vec<float, N>) * 0x1p-24f;
  const U magnitude = exponent == 0 ? __builtin_bit_cast(U, small) : exponent == 0x1f ? inf_or_nan : normal;
  return __builtin_bit_cast(Vec<float, N>, sign | magnitude);
}

// The half in the low 16 bits of each lane, the high 16 bits zero.
template <size_t N>
Vec<uint32_t, N> float32_to_float16(Vec<float, N> value) {
  using U = Vec<uint32_t, N>;
  using S = Vec<int32_t, N>;  // magnitudes fit, and signed compares are single instructions
  constexpr int32_t kInfinity = 0x7f800000;
  constexpr int32_t kHalfRoundsToInfinity = 0x477ff000;  // 65520.0f, half way from 65504 to 65536
  constexpr int32_t kHalfMinNormal = 0x38800000;         // 2^-14
  const U x = __builtin_bit_cast(U, value);
  const U sign = (x >> 16) & 0x8000;
  const U magnitude = x & 0x7fffffff;
  // Normal results: rebias the exponent, round away 13 bits to nearest even;
  // a carry out of the mantissa correctly bumps the exponent.
  const U rebiased = magnitude - ((127 - 15) << 23);
  const U normal = (rebiased + 0xfff + ((rebiased >> 13) & 1)) >> 13;
  // Subnormal results: adding 0.5 puts the value where one float ulp is 2^-24,
  // one half ulp, so the float addition itself rounds to nearest even.
  const Vec<float, N> shifted = __builtin_bit_cast(Vec<float, N>, magnitude) + 0.5f;
  const U subnormal = __builtin_bit_cast(U, shifted) - 0x3f000000;
  const U nan = 0x7e00 | ((magnitude >> 13) & 0x3ff);
  const S m = (S)magnitude;
  const U result = m > kInfinity                ? nan
                   : m >= kHalfRoundsToInfinity ? U{} + 0x7c00
                   : m < kHalfMinNormal         ? subnormal
                                                : normal;
  return sign | result;
}

// bfloat16 is the top half of a float. Here a signalling NaN also turns quiet,
// as F16C does for halves.
template <size_t N>
Vec<float, N> bfloat16_to_float32(Vec<uint32_t, N> bf16) {
  using U = Vec<uint32_t, N>;
  const U x = bf16 << 16;
  const U quiet_bit = (U)((Vec<int32_t, N>)(x & 0x7fffffff) > 0x7f800000) & 0x400000;
  return __builtin_bit_cast(Vec<float, N>, x | quiet_bit);
}

// The bfloat16 in the low 16 bits of each lane, the high 16 bits zero.
template <size_t N>
Vec<uint32_t, N> float32_to_bfloat16(Vec<float, N> value) {
  using U = Vec<uint32_t, N>;
  const U x = __builtin_bit_cast(U, value);
  // Round the low 16 bits to nearest even; a carry reaches infinity correctly.
  const U rounded = (x + 0x7fff + ((x >> 16) & 1)) >> 16;
  const U quiet_nan = (x >> 16) | 0x40;
  return value != value ? quiet_nan : rounded;
}

}  // namespace
}  // namespace hcomm::device
