// Input values whose collective results are known exactly, in every dtype and
// reduction, so that hcomm-perf checks every element with no tolerance.
// Header-only and free of library calls, so that it is unit-tested on its own.
//
// Every value is an integer (an int64_t until it is written in the dtype).
// A dtype's exact limit E is the largest magnitude up to which it holds every
// integer exactly and without overflow (int8 127, uint8 255, float16 2048,
// bfloat16 256, float32 2^24, the others capped at 2^30 so that sums over up
// to 1024 ranks stay exact in int64 and double too). Unsigned dtypes use only
// values >= 0, the others values in [-R, R].
//
// Reductions, element i of rank r among n ranks, s = (r + i) mod n its
// position in a rotation that moves with i:
//   SUM, AVG, MIN, MAX: v = a(i) + b(s). a(i) walks a band of the range; b
//     pairs +c with -c (s = 2j, 2j+1; an unpaired last position gets 0), so b
//     sums to 0 over the ranks: SUM = n*a(i) and AVG = a(i) exactly, whether
//     the division rounds or truncates; MIN = a(i) - C, MAX = a(i) + C with C
//     the largest c. The rotation makes every rank the minimum or maximum of
//     some elements. For SUM and AVG, R = E / n bounds every |v|, so that any
//     partial sum, in any order, is exact (with more ranks than E, as int8 on
//     128 ranks, that leaves only 0); for MIN and MAX, R = E.
//   PROD: v is 2 on the t(i) ranks with s < t(i) and 1 on the others, so PROD
//     = 2^t(i) with t(i) = min(n, i mod (P + 1)), P the largest exponent the
//     dtype holds (int8 6, uint8 7, float16 15, ..., capped at 62). Partial
//     products never exceed the result.
// Prefix reductions (scan, exscan) reduce the inputs of ranks 0..k, which
// these bounds keep exact as they keep the whole reduction.
// Collectives that move data without reducing it (broadcast, allgather(v),
// alltoall(v), gather, scatter): element i of a block is
// lo + ((i * stride + key) mod span) over the dtype's whole range [lo, E],
// where the block's key says who sent it to whom (block_key). Two blocks with
// keys below span differ in every element, so a block that lands in the
// wrong place is wrong throughout; keys of personalized blocks (origin,
// target) stay below span up to nranks^2 < span (int8: 15 ranks).
// Broadcast: the root's block; every other rank starts from the bitwise
// complement of the expected element, so an element left unwritten is wrong.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "hcomm/types.h"

namespace hcomm::perf {

// Codecs: each dtype as unsigned bits of its width. encode takes an integer
// that the dtype holds exactly; decode gives any bit pattern's value (for
// messages about wrong elements).
template <class T>
struct IntCodec {
  using Bits = std::make_unsigned_t<T>;
  static Bits encode(int64_t v) { return static_cast<Bits>(static_cast<T>(v)); }
  static double decode(Bits bits) { return static_cast<double>(static_cast<T>(bits)); }
};

template <class T, class B>
struct FloatCodec {
  using Bits = B;
  static Bits encode(int64_t v) { return std::bit_cast<Bits>(static_cast<T>(v)); }
  static double decode(Bits bits) { return static_cast<double>(std::bit_cast<T>(bits)); }
};

// bfloat16 is the upper half of a float32; exact integers leave the lower half 0.
struct BFloat16Codec {
  using Bits = uint16_t;
  static Bits encode(int64_t v) { return static_cast<Bits>(std::bit_cast<uint32_t>(static_cast<float>(v)) >> 16); }
  static double decode(Bits bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }
};

// IEEE binary16 from the float32 of an exact integer (0 or 1 <= |v| <= 65504):
// same sign, exponent rebiased from 127 to 15, mantissa cut from 23 to 10 bits
// (the cut bits are 0 for a value float16 holds exactly).
struct Float16Codec {
  using Bits = uint16_t;
  static Bits encode(int64_t v) {
    if (v == 0) return 0;
    const uint32_t f = std::bit_cast<uint32_t>(static_cast<float>(v));
    const uint32_t sign = (f >> 16) & 0x8000u;
    const uint32_t exponent = ((f >> 23) & 0xffu) - 127 + 15;
    return static_cast<Bits>(sign | (exponent << 10) | ((f >> 13) & 0x3ffu));
  }
  static double decode(Bits bits) {
    const double sign = (bits & 0x8000u) ? -1.0 : 1.0;
    const int exponent = (bits >> 10) & 0x1f;
    const int mantissa = bits & 0x3ff;
    if (exponent == 0) return sign * std::ldexp(mantissa, -24);
    if (exponent == 31) return mantissa ? std::numeric_limits<double>::quiet_NaN() : sign * HUGE_VAL;
    return sign * std::ldexp(mantissa + 1024, exponent - 25);
  }
};

// Calls f(Codec{}) with the codec of `dtype`.
template <class F>
decltype(auto) visit_dtype(hcomm_dtype_t dtype, F&& f) {
  switch (dtype) {
    case HCOMM_INT8:
      return f(IntCodec<int8_t>{});
    case HCOMM_UINT8:
      return f(IntCodec<uint8_t>{});
    case HCOMM_INT32:
      return f(IntCodec<int32_t>{});
    case HCOMM_UINT32:
      return f(IntCodec<uint32_t>{});
    case HCOMM_INT64:
      return f(IntCodec<int64_t>{});
    case HCOMM_UINT64:
      return f(IntCodec<uint64_t>{});
    case HCOMM_FLOAT16:
      return f(Float16Codec{});
    case HCOMM_BFLOAT16:
      return f(BFloat16Codec{});
    case HCOMM_FLOAT32:
      return f(FloatCodec<float, uint32_t>{});
    case HCOMM_FLOAT64:
      return f(FloatCodec<double, uint64_t>{});
    case HCOMM_NUM_DTYPES:
    case HCOMM_DTYPE_ENUM_MIN:
      break;
  }
  return f(IntCodec<uint8_t>{});  // unreachable for a dtype that parsed
}

inline size_t element_size(hcomm_dtype_t dtype) {
  return visit_dtype(dtype, [](auto codec) { return sizeof(typename decltype(codec)::Bits); });
}

struct DtypeLimits {
  int64_t exact;     // E: every integer up to this magnitude is exact
  int max_exponent;  // P: 2^P is exact
  bool is_signed;
};

inline constexpr int64_t kValueCap = int64_t{1} << 30;
inline constexpr int kExponentCap = 62;

inline DtypeLimits dtype_limits(hcomm_dtype_t dtype) {
  switch (dtype) {
    case HCOMM_INT8:
      return {127, 6, true};
    case HCOMM_UINT8:
      return {255, 7, false};
    case HCOMM_INT32:
      return {kValueCap, 30, true};
    case HCOMM_UINT32:
      return {kValueCap, 31, false};
    case HCOMM_INT64:
      return {kValueCap, kExponentCap, true};
    case HCOMM_UINT64:
      return {kValueCap, kExponentCap, false};
    case HCOMM_FLOAT16:
      return {2048, 15, true};
    case HCOMM_BFLOAT16:
      return {256, kExponentCap, true};
    case HCOMM_FLOAT32:
      return {int64_t{1} << 24, kExponentCap, true};
    case HCOMM_FLOAT64:
      return {kValueCap, kExponentCap, true};
    case HCOMM_NUM_DTYPES:
    case HCOMM_DTYPE_ENUM_MIN:
      break;
  }
  return {0, 0, false};
}

// A prime, so that neighbouring elements get unrelated values.
inline constexpr uint64_t kStride = 7919;

// What a rank contributes and what it must receive, for a reduction.
class ReductionValues {
 public:
  ReductionValues(hcomm_dtype_t dtype, hcomm_op_t op, int nranks) : op_(op), nranks_(nranks) {
    const DtypeLimits limits = dtype_limits(dtype);
    max_exponent_ = limits.max_exponent;
    const int64_t range = op == HCOMM_SUM || op == HCOMM_AVG ? limits.exact / nranks : limits.exact;
    const int64_t lo = limits.is_signed ? -range : 0;
    const int64_t width = range - lo;
    // C keeps at least half the range for a(i): a(i) +- C stays in [lo, range].
    const int64_t amplitude_room = width >= 4 ? width / 4 : width / 2;
    amplitude_ = std::min<int64_t>(amplitude_room, nranks / 2);
    a_lo_ = lo + amplitude_;
    a_span_ = static_cast<uint64_t>(width - 2 * amplitude_ + 1);
  }

  int64_t input(int rank, size_t i) const {
    const int s = position(rank, i);
    if (op_ == HCOMM_PROD) return s < exponent(i) ? 2 : 1;
    return a(i) + b(s);
  }

  // The reduction of the inputs of ranks 0..last, serially (AVG: their sum).
  int64_t prefix(int last, size_t i) const {
    int64_t acc = input(0, i);
    for (int r = 1; r <= last; ++r) {
      const int64_t x = input(r, i);
      switch (op_) {
        case HCOMM_PROD:
          acc *= x;
          break;
        case HCOMM_MIN:
          acc = std::min(acc, x);
          break;
        case HCOMM_MAX:
          acc = std::max(acc, x);
          break;
        default:  // SUM, AVG
          acc += x;
          break;
      }
    }
    return acc;
  }

  int64_t expected(size_t i) const {
    switch (op_) {
      case HCOMM_SUM:
        return nranks_ * a(i);
      case HCOMM_PROD:
        return int64_t{1} << exponent(i);
      case HCOMM_MIN:
        return a(i) - amplitude_;
      case HCOMM_MAX:
        return a(i) + amplitude_;
      case HCOMM_AVG:
        return a(i);
      case HCOMM_NUM_OPS:
      case HCOMM_OP_ENUM_MIN:
        break;
    }
    return 0;
  }

 private:
  int position(int rank, size_t i) const {
    return static_cast<int>((static_cast<uint64_t>(rank) + i) % static_cast<uint64_t>(nranks_));
  }
  int64_t a(size_t i) const { return a_lo_ + static_cast<int64_t>((i * kStride) % a_span_); }
  int64_t b(int s) const {
    if (amplitude_ == 0 || s >= nranks_ / 2 * 2) return 0;
    const int64_t c = 1 + (s / 2) % amplitude_;
    return s % 2 == 0 ? c : -c;
  }
  int exponent(size_t i) const {
    return static_cast<int>(std::min<uint64_t>(static_cast<uint64_t>(nranks_), i % (max_exponent_ + 1)));
  }

  hcomm_op_t op_;
  int nranks_;
  int max_exponent_ = 0;
  int64_t amplitude_ = 0;  // C
  int64_t a_lo_ = 0;
  uint64_t a_span_ = 1;
};

// The elements of the blocks that data-movement collectives carry.
class BlockValues {
 public:
  explicit BlockValues(hcomm_dtype_t dtype) {
    const DtypeLimits limits = dtype_limits(dtype);
    lo_ = limits.is_signed ? -limits.exact : 0;
    span_ = static_cast<uint64_t>(limits.exact - lo_ + 1);
  }
  int64_t value(uint64_t key, size_t i) const { return lo_ + static_cast<int64_t>((i * kStride + key) % span_); }

 private:
  int64_t lo_ = 0;
  uint64_t span_ = 1;
};

// The key of the block that `origin` sends to `target`: the receiving rank
// for personalized blocks (alltoall, scatter, gather), 0 for a block that
// every rank receives alike (broadcast, allgather).
inline uint64_t block_key(int origin, int target, int nranks) {
  return static_cast<uint64_t>(origin) + static_cast<uint64_t>(target) * static_cast<uint64_t>(nranks);
}

// What the root sends and every rank must receive, for a broadcast.
class BroadcastValues {
 public:
  BroadcastValues(hcomm_dtype_t dtype, int root) : values_(dtype), root_(root) {}
  int64_t expected(size_t i) const { return values_.value(static_cast<uint64_t>(root_), i); }

 private:
  BlockValues values_;
  int root_;
};

// The collective's data for one rank.
struct DataSpec {
  hcomm_dtype_t dtype;
  hcomm_op_t op;
  int nranks;
  int rank;
  int root;
};

// Makes every byte of `dst` differ from `reference`, so that a result that is
// not written over it is counted wrong.
inline void write_complement(void* dst, const void* reference, size_t bytes) {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* r = static_cast<const unsigned char*>(reference);
  for (size_t i = 0; i < bytes; ++i) d[i] = static_cast<unsigned char>(~r[i]);
}

// Writes value(i) for i in [0, count) as elements of `dtype`.
template <class F>
void write_values(hcomm_dtype_t dtype, void* out, size_t count, F&& value) {
  visit_dtype(dtype, [&](auto codec) {
    using Codec = decltype(codec);
    auto* elements = static_cast<typename Codec::Bits*>(out);
    for (size_t i = 0; i < count; ++i) elements[i] = Codec::encode(value(i));
  });
}

// This rank's input to a reduction (elements 0 .. count-1), and the reduced
// elements first .. first+count-1.
inline void write_reduction_input(const DataSpec& spec, void* input, size_t count) {
  const ReductionValues values(spec.dtype, spec.op, spec.nranks);
  write_values(spec.dtype, input, count, [&](size_t i) { return values.input(spec.rank, i); });
}
inline void write_reduction_result(const DataSpec& spec, void* expected, size_t first, size_t count) {
  const ReductionValues values(spec.dtype, spec.op, spec.nranks);
  write_values(spec.dtype, expected, count, [&](size_t i) { return values.expected(first + i); });
}

// Writes `count` elements of this rank's input and of the expected result.
inline void fill_reduction(const DataSpec& spec, void* input, void* expected, size_t count) {
  write_reduction_input(spec, input, count);
  write_reduction_result(spec, expected, 0, count);
}

// scan: the reduction of ranks 0..rank; exscan: of ranks 0..rank-1, and
// rank 0 receives nothing.
inline void fill_scan(const DataSpec& spec, void* input, void* expected, size_t count) {
  write_reduction_input(spec, input, count);
  const ReductionValues values(spec.dtype, spec.op, spec.nranks);
  write_values(spec.dtype, expected, count, [&](size_t i) { return values.prefix(spec.rank, i); });
}
inline void fill_exscan(const DataSpec& spec, void* input, void* expected, size_t count) {
  write_reduction_input(spec, input, count);
  if (spec.rank == 0) return;
  const ReductionValues values(spec.dtype, spec.op, spec.nranks);
  write_values(spec.dtype, expected, count, [&](size_t i) { return values.prefix(spec.rank - 1, i); });
}

// reduce: as fill_reduction, but only the root receives.
inline void fill_reduce(const DataSpec& spec, void* input, void* expected, size_t count) {
  write_reduction_input(spec, input, count);
  if (spec.rank == spec.root) write_reduction_result(spec, expected, 0, count);
}

inline void fill_broadcast(const DataSpec& spec, void* input, void* expected, size_t count) {
  const BroadcastValues values(spec.dtype, spec.root);
  write_values(spec.dtype, expected, count, [&](size_t i) { return values.expected(i); });
  const size_t bytes = count * element_size(spec.dtype);
  if (spec.rank == spec.root) {
    if (bytes) std::memcpy(input, expected, bytes);
  } else {
    write_complement(input, expected, bytes);
  }
}

// Writes block `key` (count elements) at `out`.
inline void write_block(hcomm_dtype_t dtype, void* out, size_t count, uint64_t key) {
  const BlockValues values(dtype);
  write_values(dtype, out, count, [&](size_t i) { return values.value(key, i); });
}

// Writes one block per rank r, the block of key(r), packed in rank order.
template <class Key>
void write_blocks(const DataSpec& spec, void* out, size_t count, Key&& key) {
  auto* bytes = static_cast<unsigned char*>(out);
  const size_t block_bytes = count * element_size(spec.dtype);
  for (int r = 0; r < spec.nranks; ++r)
    write_block(spec.dtype, bytes + static_cast<size_t>(r) * block_bytes, count, key(r));
}

// The collectives of per-rank blocks (count elements per block, see hcomm.h).
// Each writes the input this rank sends and the result it receives; a rank
// that sends or receives nothing gets nothing written.

// reduce_scatter: the input is the reduction's elements 0 .. n*count-1, the
// result this rank's block of them.
inline void fill_reduce_scatter(const DataSpec& spec, void* input, void* expected, size_t count) {
  write_reduction_input(spec, input, count * static_cast<size_t>(spec.nranks));
  write_reduction_result(spec, expected, static_cast<size_t>(spec.rank) * count, count);
}

inline void fill_allgather(const DataSpec& spec, void* input, void* expected, size_t count) {
  write_block(spec.dtype, input, count, block_key(spec.rank, 0, spec.nranks));
  write_blocks(spec, expected, count, [&](int r) { return block_key(r, 0, spec.nranks); });
}

inline void fill_alltoall(const DataSpec& spec, void* input, void* expected, size_t count) {
  write_blocks(spec, input, count, [&](int r) { return block_key(spec.rank, r, spec.nranks); });
  write_blocks(spec, expected, count, [&](int r) { return block_key(r, spec.rank, spec.nranks); });
}

inline void fill_gather(const DataSpec& spec, void* input, void* expected, size_t count) {
  write_block(spec.dtype, input, count, block_key(spec.rank, spec.root, spec.nranks));
  if (spec.rank == spec.root)
    write_blocks(spec, expected, count, [&](int r) { return block_key(r, spec.root, spec.nranks); });
}

inline void fill_scatter(const DataSpec& spec, void* input, void* expected, size_t count) {
  if (spec.rank == spec.root)
    write_blocks(spec, input, count, [&](int r) { return block_key(spec.root, r, spec.nranks); });
  write_block(spec.dtype, expected, count, block_key(spec.root, spec.rank, spec.nranks));
}

struct Mismatch {
  size_t wrong = 0;        // elements that differ from the expected bits
  size_t first_index = 0;  // valid when wrong > 0
};

inline Mismatch compare_elements(const void* got, const void* expected, size_t count, size_t elem_size) {
  Mismatch result;
  if (count == 0 || std::memcmp(got, expected, count * elem_size) == 0) return result;
  const auto* g = static_cast<const unsigned char*>(got);
  const auto* e = static_cast<const unsigned char*>(expected);
  for (size_t i = 0; i < count; ++i) {
    if (std::memcmp(g + i * elem_size, e + i * elem_size, elem_size) == 0) continue;
    if (result.wrong++ == 0) result.first_index = i;
  }
  return result;
}

// The value of element i, for messages.
inline double element_value(hcomm_dtype_t dtype, const void* buffer, size_t i) {
  return visit_dtype(dtype, [&](auto codec) {
    using Codec = decltype(codec);
    typename Codec::Bits bits;
    std::memcpy(&bits, static_cast<const unsigned char*>(buffer) + i * sizeof bits, sizeof bits);
    return Codec::decode(bits);
  });
}

}  // namespace hcomm::perf
