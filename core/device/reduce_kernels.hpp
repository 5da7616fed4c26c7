// The reduction loops, written once over (ISA, element format, operation) and
// instantiated by one translation unit per instruction set. Such a unit
// includes the standard headers first, then opens its target region
// (HCOMM_KERNEL_TARGET_BEGIN), then includes this file, so that the templates
// here, and nothing shared, are compiled for that ISA. The unnamed namespace
// keeps each ISA's instantiations apart at link time.
//
// The ISA parameter is a struct with:
//   static constexpr size_t kVectorBytes;  // bytes of one vector register
//   using Float16Io = ...;                 // Float16InstructionIo<Isa> or PairedIo<Isa, Float16Codec>
// and, for Float16InstructionIo, the conversions of kVectorBytes / 4 lanes:
//   static Vec<float, N> float16_to_float32(Vec<uint16_t, N>);
//   static Vec<uint16_t, N> float32_to_float16(Vec<float, N>);
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "core/device/float16.hpp"
#include "core/device/reduce_isa.hpp"

namespace hcomm::device {
namespace {

// A function that returns a Block (a struct of vectors) is always inlined:
// GCC 12 clears the upper lanes of a 256- or 512-bit vector returned inside a
// struct (it places a vzeroupper before the return), so such a function
// called out of line (under -fno-inline or a sanitizer's instrumentation)
// loses all but the first 16 bytes of its result.
#define HCOMM_RETURNS_BLOCK [[gnu::always_inline]] inline

template <class V>
using LaneOf = std::remove_cvref_t<decltype(std::declval<V>()[0])>;
template <class V>
constexpr size_t kLanesOf = sizeof(V) / sizeof(LaneOf<V>);

// Integer sums and products wrap: they are computed in the unsigned lane type,
// where overflow is defined. Floats are computed as they are.
template <class T>
struct WrappingLane {
  using type = T;
};
template <class T>
requires std::is_integral_v<T>
struct WrappingLane<T> {
  using type = std::make_unsigned_t<T>;
};
template <class V>
using WrappingVec = Vec<typename WrappingLane<LaneOf<V>>::type, kLanesOf<V>>;

template <class V>
V add(V a, V b) {
  return __builtin_bit_cast(V, __builtin_bit_cast(WrappingVec<V>, a) + __builtin_bit_cast(WrappingVec<V>, b));
}

template <class V>
V multiply(V a, V b) {
  return __builtin_bit_cast(V, __builtin_bit_cast(WrappingVec<V>, a) * __builtin_bit_cast(WrappingVec<V>, b));
}

template <size_t kFirst, class V, size_t... kLane>
auto lanes_of(V v, std::index_sequence<kLane...>) {
  return __builtin_shufflevector(v, v, (kFirst + kLane)...);
}

template <class Half, size_t... kLane>
auto concatenate(Half low, Half high, std::index_sequence<kLane...>) {
  return __builtin_shufflevector(low, high, kLane...);
}

// f applied to each half of v, in registers. A conversion of 32-bit lanes to
// double goes by halves, so that each result fills one vector register: GCC
// 12 handles wider ones badly, or not at all at -O0.
template <class V, class F>
V by_halves(V v, F f) {
  constexpr size_t kHalf = kLanesOf<V> / 2;
  return concatenate(f(lanes_of<0>(v, std::make_index_sequence<kHalf>())),
                     f(lanes_of<kHalf>(v, std::make_index_sequence<kHalf>())), std::make_index_sequence<2 * kHalf>());
}

// Division by a divisor in [2, 2^31); integers truncate toward zero. Integer
// lanes of up to 32 bits go through floating point, which is exact enough
// here: the quotient's rounding error, at most 2^-p * |v| / divisor with p
// mantissa bits, stays below 1 / divisor, the least distance from a
// fractional quotient to an integer, whenever |v| < 2^(p - 1). Float (p = 24)
// covers 8-bit lanes, double (p = 53) 32-bit ones; 64-bit lanes divide one by
// one.
template <class V>
V divide(V v, int divisor) {
  using T = LaneOf<V>;
  if constexpr (std::is_floating_point_v<T>) {
    return v / static_cast<T>(divisor);
  } else if constexpr (sizeof(T) == 1) {
    // Four lanes per 32-bit word: shifted to the top and back, each byte
    // becomes an int32 lane (sign- or zero-extended) of its own vector.
    using Word = std::conditional_t<std::is_signed_v<T>, int32_t, uint32_t>;
    constexpr size_t kWords = kLanesOf<V> / 4;
    const auto words = __builtin_bit_cast(Vec<Word, kWords>, v);
    Vec<Word, kWords> quotients = {};
    for (int byte = 0; byte < 4; ++byte) {
      const auto lane = (Vec<int32_t, kWords>)((words << (24 - 8 * byte)) >> 24);
      const auto quotient = __builtin_convertvector(
          __builtin_convertvector(lane, Vec<float, kWords>) / static_cast<float>(divisor), Vec<int32_t, kWords>);
      quotients |= ((Vec<Word, kWords>)quotient & 0xff) << (8 * byte);
    }
    return __builtin_bit_cast(V, quotients);
  } else if constexpr (std::is_same_v<T, int32_t>) {
    return by_halves(v, [divisor](auto piece) {
      constexpr size_t N = kLanesOf<decltype(piece)>;
      return __builtin_convertvector(__builtin_convertvector(piece, Vec<double, N>) / divisor, decltype(piece));
    });
  } else if constexpr (std::is_same_v<T, uint32_t>) {
    // Converted through int32, which x86 converts in vectors: offset by 2^31
    // and back. The quotient is below 2^31, since the divisor is at least 2.
    return by_halves(v, [divisor](auto piece) {
      constexpr size_t N = kLanesOf<decltype(piece)>;
      const auto wide = __builtin_convertvector((Vec<int32_t, N>)(piece ^ 0x80000000u), Vec<double, N>) + 0x1p31;
      return (decltype(piece))__builtin_convertvector(wide / divisor, Vec<int32_t, N>);
    });
  } else {
    for (size_t i = 0; i < kLanesOf<V>; ++i) v[i] = static_cast<T>(v[i] / static_cast<T>(divisor));
    return v;
  }
}

// Bits of float or double lanes, for sign tricks.
template <class V>
using BitsOf = Vec<std::conditional_t<sizeof(LaneOf<V>) == 8, uint64_t, uint32_t>, kLanesOf<V>>;

// Floats follow IEEE 754-2019 minimum and maximum: NaN when either operand is
// NaN, and -0 < +0, so that the result does not depend on the operand order.
template <class V>
V minimum(V a, V b) {
  if constexpr (std::is_integral_v<LaneOf<V>>) {
    return (a < b) ? a : b;
  } else {
    const V negative_zero_if_either =
        __builtin_bit_cast(V, __builtin_bit_cast(BitsOf<V>, a) | __builtin_bit_cast(BitsOf<V>, b));
    return ((a < b) | (a != a)) ? a : (a == b) ? negative_zero_if_either : b;
  }
}

template <class V>
V maximum(V a, V b) {
  if constexpr (std::is_integral_v<LaneOf<V>>) {
    return (a > b) ? a : b;
  } else {
    const V positive_zero_if_either =
        __builtin_bit_cast(V, __builtin_bit_cast(BitsOf<V>, a) & __builtin_bit_cast(BitsOf<V>, b));
    return ((a > b) | (a != a)) ? a : (a == b) ? positive_zero_if_either : b;
  }
}

// One reduction operation on vectors.
template <hcomm_op_t kOp>
struct Combine {
  int avg_divisor;

  template <class V>
  V operator()(V a, V b) const {
    static_assert(HCOMM_NUM_OPS == 5, "a new operation needs its case here");
    if constexpr (kOp == HCOMM_SUM) {
      return add(a, b);
    } else if constexpr (kOp == HCOMM_PROD) {
      return multiply(a, b);
    } else if constexpr (kOp == HCOMM_MIN) {
      return minimum(a, b);
    } else if constexpr (kOp == HCOMM_MAX) {
      return maximum(a, b);
    } else {
      static_assert(kOp == HCOMM_AVG);
      return divide(add(a, b), avg_divisor);
    }
  }
};

struct DivideBy {
  int divisor;

  template <class V>
  V operator()(V v) const {
    return divide(v, divisor);
  }
};

// The elements one step of a loop handles, as K vectors of values.
template <class V, size_t K>
struct Block {
  static constexpr size_t kVectors = K;
  V vectors[K];
};

// An element format on an ISA ("Io") moves blocks between memory, at any
// alignment, and the lanes computed on:
//   using Target;                   // the ISA
//   using Stored;                   // one element in memory
//   using Block;                    // Block<vector of values, K>
//   static constexpr size_t kElements;
//   static Block load(const Stored*);
//   template <bool kStream> static void store(Stored*, const Block&);
// (kStream: non-temporal, to a block-aligned address).

template <class V>
V load_vector(const void* p) {
  V v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}

template <class V>
void store_vector(void* p, V v) {
  __builtin_memcpy(p, &v, sizeof v);
}

// A non-temporal store of a vector to an address aligned to its size: it
// goes to memory without first reading the line into the cache.
template <class V>
void stream_vector(void* p, V v) {
#if defined(__x86_64__)
  if constexpr (sizeof(V) == 64)
    _mm512_stream_si512(static_cast<__m512i*>(p), (__m512i)v);
  else if constexpr (sizeof(V) == 32)
    _mm256_stream_si256(static_cast<__m256i*>(p), (__m256i)v);
  else if constexpr (sizeof(V) == 16)
    _mm_stream_si128(static_cast<__m128i*>(p), (__m128i)v);
  else
    store_vector(p, v);
#else
  store_vector(p, v);
#endif
}

// Orders the non-temporal stores before later stores (a flag raised after
// the result): they are weakly ordered.
inline void stream_fence() {
#if defined(__x86_64__)
  _mm_sfence();
#endif
}

// Integers, float and double: computed on as they are stored.
template <class Isa, class T>
struct PlainIo {
  using Target = Isa;
  using Stored = T;
  using Values = Vec<T, Isa::kVectorBytes / sizeof(T)>;
  using Block = device::Block<Values, 1>;
  static constexpr size_t kElements = kLanesOf<Values>;
  HCOMM_RETURNS_BLOCK static Block load(const T* p) { return {{load_vector<Values>(p)}}; }
  template <bool kStream = false>
  static void store(T* p, const Block& block) {
    kStream ? stream_vector(p, block.vectors[0]) : store_vector(p, block.vectors[0]);
  }
};

// float16 where the CPU converts it: one vector of floats per block.
template <class Isa>
struct Float16InstructionIo {
  using Target = Isa;
  using Stored = uint16_t;
  static constexpr size_t kElements = Isa::kVectorBytes / sizeof(float);
  using Block = device::Block<Vec<float, kElements>, 1>;
  HCOMM_RETURNS_BLOCK static Block load(const uint16_t* p) { return {{Isa::float16_to_float32(load_vector<Vec<uint16_t, kElements>>(p))}}; }
  template <bool kStream = false>
  static void store(uint16_t* p, const Block& block) {
    const auto half = Isa::float32_to_float16(block.vectors[0]);
    kStream ? stream_vector(p, half) : store_vector(p, half);
  }
};

// 16-bit floats converted in the lanes, as pairs: a vector of 32-bit words
// holds an even element in its low half and an odd one in its high half, so
// splitting and joining take a shift or a mask, and no shuffle. Elements are
// computed on in that order, which elementwise operations do not see.
template <class Isa, class Codec>
struct PairedIo {
  using Target = Isa;
  using Stored = uint16_t;
  using Words = Vec<uint32_t, Isa::kVectorBytes / sizeof(uint32_t)>;
  static constexpr size_t kWords = kLanesOf<Words>;
  using Block = device::Block<Vec<float, kWords>, 2>;
  static constexpr size_t kElements = 2 * kWords;
  HCOMM_RETURNS_BLOCK static Block load(const uint16_t* p) {
    const Words words = load_vector<Words>(p);
    return {{Codec::template widen_low<kWords>(words), Codec::template widen_high<kWords>(words)}};
  }
  template <bool kStream = false>
  static void store(uint16_t* p, const Block& block) {
    const Words words =
        Codec::template narrow<kWords>(block.vectors[0]) | (Codec::template narrow<kWords>(block.vectors[1]) << 16);
    kStream ? stream_vector(p, words) : store_vector(p, words);
  }
};

// A codec widens the low or the high half of each word to a float, and
// narrows a float to the low half of a word.
struct Float16Codec {
  template <size_t N>
  static Vec<float, N> widen_low(Vec<uint32_t, N> words) {
    return float16_to_float32<N>(words & 0xffff);
  }
  template <size_t N>
  static Vec<float, N> widen_high(Vec<uint32_t, N> words) {
    return float16_to_float32<N>(words >> 16);
  }
  template <size_t N>
  static Vec<uint32_t, N> narrow(Vec<float, N> values) {
    return float32_to_float16<N>(values);
  }
};

// bfloat16 is the high half of a float, so widening is one shift or mask. A
// signalling NaN stays signalling in the lanes, which changes nothing, since
// narrowing quiets every NaN.
struct BFloat16Codec {
  template <size_t N>
  static Vec<float, N> widen_low(Vec<uint32_t, N> words) {
    return __builtin_bit_cast(Vec<float, N>, words << 16);
  }
  template <size_t N>
  static Vec<float, N> widen_high(Vec<uint32_t, N> words) {
    return __builtin_bit_cast(Vec<float, N>, words & 0xffff0000);
  }
  template <size_t N>
  static Vec<uint32_t, N> narrow(Vec<float, N> values) {
    return float32_to_bfloat16<N>(values);
  }
};

template <class Io, class F, class... Blocks>
HCOMM_RETURNS_BLOCK typename Io::Block apply(F f, const Blocks&... in) {
  typename Io::Block out;
  for (size_t k = 0; k < Io::Block::kVectors; ++k) out.vectors[k] = f(in.vectors[k]...);
  return out;
}

// The last count < kElements elements go through a zero-padded block, moved
// with the ISA's byte-masked loads and stores where it has them
// (Isa::load_first, Isa::store_first), else copied: a copy of a variable
// length is a call, and a vector loaded from smaller stores waits for them.
template <class Io>
using StoredBytes = Vec<uint8_t, Io::kElements * sizeof(typename Io::Stored)>;

template <class Io>
HCOMM_RETURNS_BLOCK typename Io::Block load_partial(const typename Io::Stored* p, size_t count) {
  using Raw = StoredBytes<Io>;
  const size_t bytes = count * sizeof(typename Io::Stored);
  Raw raw = {};
  if constexpr (requires { Io::Target::template load_first<Raw>(p, bytes); })
    raw = Io::Target::template load_first<Raw>(p, bytes);
  else
    __builtin_memcpy(&raw, p, bytes);
  return Io::load(reinterpret_cast<const typename Io::Stored*>(&raw));
}

template <class Io>
void store_partial(typename Io::Stored* p, const typename Io::Block& block, size_t count) {
  StoredBytes<Io> raw;
  Io::store(reinterpret_cast<typename Io::Stored*>(&raw), block);
  const size_t bytes = count * sizeof(typename Io::Stored);
  if constexpr (requires { Io::Target::store_first(p, raw, bytes); })
    Io::Target::store_first(p, raw, bytes);
  else
    __builtin_memcpy(p, &raw, bytes);
}

// The whole blocks from element i on; returns where they end.
template <class Io, bool kStream, class F, class... Src>
size_t transform_blocks(typename Io::Stored* dst, size_t i, size_t count, F f, const Src*... src) {
  // Several blocks per iteration keep enough loads in flight for memory bandwidth.
#pragma GCC unroll 4
  for (; i + Io::kElements <= count; i += Io::kElements)
    Io::template store<kStream>(dst + i, apply<Io>(f, Io::load(src + i)...));
  return i;
}

// dst[i] = f(src[i]...) for i < count, one block at a time. dst may be one
// of the sources: each block is loaded before its own results are stored.
// `stream`: whole blocks at block-aligned addresses are stored non-temporally
// after a cached head (dst must be element-aligned for that; else every
// store is cached).
template <class Io, class F, class... Src>
void transform(typename Io::Stored* dst, size_t count, bool stream, F f, const Src*... src) {
  using Stored = typename Io::Stored;
  constexpr size_t kBlockBytes = Io::kElements * sizeof(Stored);
  size_t i = 0;
  const auto address = reinterpret_cast<uintptr_t>(dst);
  if (stream && address % sizeof(Stored) == 0) {
    size_t head = (kBlockBytes - address % kBlockBytes) % kBlockBytes / sizeof(Stored);
    if (head > count) head = count;
    if (head) store_partial<Io>(dst, apply<Io>(f, load_partial<Io>(src, head)...), head);
    i = transform_blocks<Io, true>(dst, head, count, f, src...);
    stream_fence();
  }
  i = transform_blocks<Io, false>(dst, i, count, f, src...);
  if (i < count) store_partial<Io>(dst + i, apply<Io>(f, load_partial<Io>(src + i, count - i)...), count - i);
}

template <class Io, hcomm_op_t kOp>
void reduce_kernel(void* dst, const void* a, const void* b, size_t count, int avg_divisor, bool stream) {
  using Stored = typename Io::Stored;
  transform<Io>(static_cast<Stored*>(dst), count, stream, Combine<kOp>{avg_divisor}, static_cast<const Stored*>(a),
                static_cast<const Stored*>(b));
}

template <class Io>
void divide_kernel(void* dst, size_t count, int divisor) {
  using Stored = typename Io::Stored;
  transform<Io>(static_cast<Stored*>(dst), count, false, DivideBy{divisor}, static_cast<const Stored*>(dst));
}

template <class Io, size_t... kOps>
constexpr void add_format(KernelTable& table, hcomm_dtype_t dtype, std::index_sequence<kOps...>) {
  ((table.reduce[dtype][kOps] = &reduce_kernel<Io, static_cast<hcomm_op_t>(kOps)>), ...);
  table.divide[dtype] = &divide_kernel<Io>;
  table.element_bytes[dtype] = sizeof(typename Io::Stored);
}

template <class Io>
constexpr void add_format(KernelTable& table, hcomm_dtype_t dtype) {
  add_format<Io>(table, dtype, std::make_index_sequence<HCOMM_NUM_OPS>());
}

template <class Isa>
constexpr KernelTable make_kernel_table() {
  static_assert(HCOMM_NUM_DTYPES == 10, "a new dtype needs its format here");
  KernelTable table{};
  add_format<PlainIo<Isa, int8_t>>(table, HCOMM_INT8);
  add_format<PlainIo<Isa, uint8_t>>(table, HCOMM_UINT8);
  add_format<PlainIo<Isa, int32_t>>(table, HCOMM_INT32);
  add_format<PlainIo<Isa, uint32_t>>(table, HCOMM_UINT32);
  add_format<PlainIo<Isa, int64_t>>(table, HCOMM_INT64);
  add_format<PlainIo<Isa, uint64_t>>(table, HCOMM_UINT64);
  add_format<typename Isa::Float16Io>(table, HCOMM_FLOAT16);
  add_format<PairedIo<Isa, BFloat16Codec>>(table, HCOMM_BFLOAT16);
  add_format<PlainIo<Isa, float>>(table, HCOMM_FLOAT32);
  add_format<PlainIo<Isa, double>>(table, HCOMM_FLOAT64);
  return table;
}

}  // namespace
}  // namespace hcomm::device
