// The CPU reduction kernels, on every instruction set this CPU runs, checked
// element by element against a plain scalar reference; the float16 and
// bfloat16 conversions against references that share no code with them.
#include "core/device/reduce.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "core/common/error.hpp"
#include "core/device/reduce_isa.hpp"

namespace hcomm::device {
namespace {

// ---------------------------------------------------------------------------
// Element formats as the reference sees them: how an element is stored, and
// the value it is computed on.

template <class T>
struct PlainFormat {
  using Stored = T;
  using Value = T;
  static T decode(T stored) { return stored; }
  static T encode(T value) { return value; }
};

struct HalfFormat {
  using Stored = uint16_t;
  using Value = float;
  static float decode(uint16_t h) { return half_to_float(h); }
  static uint16_t encode(float f) { return float_to_half(f); }
};

struct BFloat16Format {
  using Stored = uint16_t;
  using Value = float;
  static float decode(uint16_t h) { return bfloat16_to_float(h); }
  static uint16_t encode(float f) { return float_to_bfloat16(f); }
};

template <class F>
void visit_format(hcomm_dtype_t dtype, F&& f) {
  switch (dtype) {
    case HCOMM_INT8:
      return f(PlainFormat<int8_t>{});
    case HCOMM_UINT8:
      return f(PlainFormat<uint8_t>{});
    case HCOMM_INT32:
      return f(PlainFormat<int32_t>{});
    case HCOMM_UINT32:
      return f(PlainFormat<uint32_t>{});
    case HCOMM_INT64:
      return f(PlainFormat<int64_t>{});
    case HCOMM_UINT64:
      return f(PlainFormat<uint64_t>{});
    case HCOMM_FLOAT16:
      return f(HalfFormat{});
    case HCOMM_BFLOAT16:
      return f(BFloat16Format{});
    case HCOMM_FLOAT32:
      return f(PlainFormat<float>{});
    case HCOMM_FLOAT64:
      return f(PlainFormat<double>{});
    default:
      FAIL() << "no format for dtype " << dtype;
  }
}

const char* const kDtypeNames[] = {"int8",   "uint8",   "int32",    "uint32",  "int64",
                                   "uint64", "float16", "bfloat16", "float32", "float64"};
const char* const kOpNames[] = {"sum", "prod", "min", "max", "avg"};
static_assert(std::size(kDtypeNames) == HCOMM_NUM_DTYPES && std::size(kOpNames) == HCOMM_NUM_OPS);

// ---------------------------------------------------------------------------
// The scalar reference.

// Integers truncate toward zero, as C++ division does.
template <class T>
T reference_divide(T value, int divisor) {
  if constexpr (std::is_integral_v<T>) {
    using Wide = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
    return static_cast<T>(static_cast<Wide>(value) / divisor);
  } else {
    return value / static_cast<T>(divisor);
  }
}

template <class T>
T reference_op(hcomm_op_t op, T a, T b, int avg_divisor) {
  if constexpr (std::is_integral_v<T>) {
    // Wrapping arithmetic in uint64_t; narrowing back is modular (C++20).
    const T sum = static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
    switch (op) {
      case HCOMM_SUM:
        return sum;
      case HCOMM_PROD:
        return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
      case HCOMM_MIN:
        return a < b ? a : b;
      case HCOMM_MAX:
        return a > b ? a : b;
      case HCOMM_AVG:
        return avg_divisor > 0 ? reference_divide(sum, avg_divisor) : sum;
      default:
        break;
    }
  } else {
    const T nan = std::numeric_limits<T>::quiet_NaN();
    switch (op) {
      case HCOMM_SUM:
        return a + b;
      case HCOMM_PROD:
        return a * b;
      case HCOMM_MIN:
        if (std::isnan(a) || std::isnan(b)) return nan;
        if (a == b) return std::signbit(a) ? a : b;
        return a < b ? a : b;
      case HCOMM_MAX:
        if (std::isnan(a) || std::isnan(b)) return nan;
        if (a == b) return std::signbit(a) ? b : a;
        return a > b ? a : b;
      case HCOMM_AVG:
        return avg_divisor > 0 ? reference_divide(a + b, avg_divisor) : a + b;
      default:
        break;
    }
  }
  ADD_FAILURE() << "no reference for op " << op;
  return T{};
}

template <class Format>
bool is_nan(typename Format::Stored stored) {
  if constexpr (std::is_floating_point_v<typename Format::Value>)
    return std::isnan(Format::decode(stored));
  else
    return false;
}

template <class Stored>
std::string hex(Stored s) {
  unsigned long long bits = 0;
  std::memcpy(&bits, &s, sizeof s);  // the element's own bytes, floats too
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx", bits);
  return text;
}

// Equal bits (so -0 is not +0), or NaN on both sides (which NaN depends on
// operand order).
template <class Format>
::testing::AssertionResult same_elements(const typename Format::Stored* got,
                                         const std::vector<typename Format::Stored>& expected) {
  for (size_t i = 0; i < expected.size(); ++i) {
    typename Format::Stored g;
    std::memcpy(&g, got + i, sizeof g);
    if (std::memcmp(&g, &expected[i], sizeof g) != 0 && !(is_nan<Format>(g) && is_nan<Format>(expected[i])))
      return ::testing::AssertionFailure()
             << "element " << i << " of " << expected.size() << ": got " << hex(g) << ", expected " << hex(expected[i]);
  }
  return ::testing::AssertionSuccess();
}

bool same_bytes(const void* x, const void* y, size_t bytes) { return bytes == 0 || std::memcmp(x, y, bytes) == 0; }

// ---------------------------------------------------------------------------
// Inputs: every bit pattern for integers and 16-bit floats; for float32 and
// float64 mostly ordinary values, with zeros, infinities, NaN and subnormals.

template <class T>
T random_element(std::mt19937_64& rng) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(rng());
  } else {
    std::uniform_int_distribution<int> pick(0, 31);
    std::uniform_real_distribution<T> unit(-4, 4);
    const T specials[] = {T(0),
                          -T(0),
                          std::numeric_limits<T>::infinity(),
                          -std::numeric_limits<T>::infinity(),
                          std::numeric_limits<T>::quiet_NaN(),
                          std::numeric_limits<T>::denorm_min(),
                          -std::numeric_limits<T>::denorm_min() * 3,
                          std::numeric_limits<T>::max()};
    const int choice = pick(rng);
    if (choice < static_cast<int>(std::size(specials))) return specials[choice];
    return std::ldexp(unit(rng), pick(rng) - 16);
  }
}

template <class Format>
std::vector<typename Format::Stored> random_elements(size_t count, std::mt19937_64& rng) {
  std::vector<typename Format::Stored> values(count);
  for (auto& v : values) v = random_element<typename Format::Stored>(rng);
  return values;
}

// ---------------------------------------------------------------------------
// Buffers placed at a chosen byte offset, with guard bytes around them that a
// kernel must leave alone.

constexpr unsigned char kGuard = 0xa5;
constexpr size_t kGuardBytes = 64;

class GuardedBuffer {
 public:
  GuardedBuffer(const void* data, size_t bytes, size_t offset)
      : storage_(kGuardBytes + offset + bytes + kGuardBytes, kGuard), offset_(kGuardBytes + offset), bytes_(bytes) {
    if (bytes > 0) std::memcpy(data_(), data, bytes);
  }
  void* data() { return data_(); }
  ::testing::AssertionResult guards_intact() const {
    for (size_t i = 0; i < storage_.size(); ++i)
      if ((i < offset_ || i >= offset_ + bytes_) && storage_[i] != kGuard)
        return ::testing::AssertionFailure()
               << "byte " << static_cast<long>(i) - static_cast<long>(offset_) << " outside the buffer was written";
    return ::testing::AssertionSuccess();
  }

 private:
  void* data_() { return storage_.data() + offset_; }
  std::vector<unsigned char> storage_;
  size_t offset_;
  size_t bytes_;
};

enum class Aliasing { kNone, kDstIsA, kDstIsB };
const char* const kAliasingNames[] = {"separate buffers", "dst == a", "dst == b"};

// 15 and 63: the longest tails of 4- and 1-byte elements in 64-byte vectors.
const size_t kCounts[] = {0, 1, 7, 15, 33, 63, 1027, 100003};
// Byte offsets of (dst, a, b): aligned; dst element- but not vector-aligned
// (streamed stores start after a cached head); misaligned for every element size.
const size_t kOffsets[][3] = {{0, 0, 0}, {8, 0, 4}, {1, 3, 5}};
constexpr int kAvgDivisor = 3;

std::vector<Isa> runnable_isas() {
  std::vector<Isa> isas;
  for (Isa isa : kAllIsas)
    if (kernels_for(isa) != nullptr) isas.push_back(isa);
  return isas;
}

// ---------------------------------------------------------------------------
// Every ISA x dtype x op x count x aliasing x alignment.

class ReduceKernelTest : public ::testing::TestWithParam<std::tuple<Isa, int, int>> {
 protected:
  const KernelTable& kernels() const { return *kernels_for(std::get<0>(GetParam())); }
  hcomm_dtype_t dtype() const { return static_cast<hcomm_dtype_t>(std::get<1>(GetParam())); }
  hcomm_op_t op() const { return static_cast<hcomm_op_t>(std::get<2>(GetParam())); }
};

TEST_P(ReduceKernelTest, MatchesScalarReference) {
  visit_format(dtype(), [&](auto format) {
    using Format = decltype(format);
    using Stored = typename Format::Stored;
    std::mt19937_64 rng(1000 * dtype() + op());
    for (size_t count : kCounts) {
      const auto a = random_elements<Format>(count, rng);
      const auto b = random_elements<Format>(count, rng);
      std::vector<Stored> expected(count);
      for (size_t i = 0; i < count; ++i)
        expected[i] = Format::encode(reference_op(op(), Format::decode(a[i]), Format::decode(b[i]), kAvgDivisor));
      const size_t bytes = count * sizeof(Stored);
      for (Aliasing aliasing : {Aliasing::kNone, Aliasing::kDstIsA, Aliasing::kDstIsB}) {
        for (const auto& offset : kOffsets) {
          for (Stores stores : {Stores::kCached, Stores::kStreamed}) {
            SCOPED_TRACE(testing::Message() << "count " << count << ", " << kAliasingNames[static_cast<int>(aliasing)]
                                            << ", byte offsets " << offset[0] << "/" << offset[1] << "/" << offset[2]
                                            << (stores == Stores::kStreamed ? ", streamed" : ", cached"));
            GuardedBuffer in_a(a.data(), bytes, offset[1]);
            GuardedBuffer in_b(b.data(), bytes, offset[2]);
            GuardedBuffer out(a.data(), bytes, offset[0]);
            void* dst = aliasing == Aliasing::kDstIsA   ? in_a.data()
                        : aliasing == Aliasing::kDstIsB ? in_b.data()
                                                        : out.data();
            reduce_with(kernels(), dtype(), op(), dst, in_a.data(), in_b.data(), count, kAvgDivisor, stores);
            EXPECT_TRUE(same_elements<Format>(static_cast<const Stored*>(dst), expected));
            EXPECT_TRUE(in_a.guards_intact());
            EXPECT_TRUE(in_b.guards_intact());
            EXPECT_TRUE(out.guards_intact());
            EXPECT_TRUE(aliasing == Aliasing::kDstIsA || same_bytes(in_a.data(), a.data(), bytes)) << "a changed";
            EXPECT_TRUE(aliasing == Aliasing::kDstIsB || same_bytes(in_b.data(), b.data(), bytes)) << "b changed";
          }
        }
      }
    }
  });
}

INSTANTIATE_TEST_SUITE_P(AllIsas, ReduceKernelTest,
                         ::testing::Combine(::testing::ValuesIn(runnable_isas()),
                                            ::testing::Range(0, static_cast<int>(HCOMM_NUM_DTYPES)),
                                            ::testing::Range(0, static_cast<int>(HCOMM_NUM_OPS))),
                         [](const auto& test) {
                           return std::string(isa_name(std::get<0>(test.param))) + "_" +
                                  kDtypeNames[std::get<1>(test.param)] + "_" + kOpNames[std::get<2>(test.param)];
                         });

class DivideKernelTest : public ::testing::TestWithParam<std::tuple<Isa, int>> {};

TEST_P(DivideKernelTest, MatchesScalarReference) {
  const KernelTable& kernels = *kernels_for(std::get<0>(GetParam()));
  const auto dtype = static_cast<hcomm_dtype_t>(std::get<1>(GetParam()));
  visit_format(dtype, [&](auto format) {
    using Format = decltype(format);
    using Stored = typename Format::Stored;
    std::mt19937_64 rng(dtype);
    for (size_t count : kCounts) {
      for (int divisor : {1, 3, 1000}) {
        SCOPED_TRACE(testing::Message() << "count " << count << ", divisor " << divisor);
        const auto values = random_elements<Format>(count, rng);
        std::vector<Stored> expected(count);
        for (size_t i = 0; i < count; ++i)
          expected[i] = Format::encode(reference_divide(Format::decode(values[i]), divisor));
        GuardedBuffer buffer(values.data(), count * sizeof(Stored), 1);
        divide_with(kernels, dtype, buffer.data(), count, divisor);
        EXPECT_TRUE(same_elements<Format>(static_cast<const Stored*>(buffer.data()), expected));
        EXPECT_TRUE(buffer.guards_intact());
      }
    }
  });
}

INSTANTIATE_TEST_SUITE_P(AllIsas, DivideKernelTest,
                         ::testing::Combine(::testing::ValuesIn(runnable_isas()),
                                            ::testing::Range(0, static_cast<int>(HCOMM_NUM_DTYPES))),
                         [](const auto& test) {
                           return std::string(isa_name(std::get<0>(test.param))) + "_" +
                                  kDtypeNames[std::get<1>(test.param)];
                         });

// The vector conversions of every ISA, on all 65536 encodings: max(x, x) is x
// (a NaN comes back quiet).
class ConversionKernelTest : public ::testing::TestWithParam<Isa> {};

TEST_P(ConversionKernelTest, EveryEncodingSurvivesMax) {
  const KernelTable& kernels = *kernels_for(GetParam());
  for (hcomm_dtype_t dtype : {HCOMM_FLOAT16, HCOMM_BFLOAT16}) {
    SCOPED_TRACE(kDtypeNames[dtype]);
    const uint16_t quiet_bit = dtype == HCOMM_FLOAT16 ? 0x200 : 0x40;
    std::vector<uint16_t> all(65536), expected(65536), got(65536);
    for (uint32_t i = 0; i < 65536; ++i) {
      all[i] = static_cast<uint16_t>(i);
      const bool nan =
          dtype == HCOMM_FLOAT16 ? std::isnan(half_to_float(all[i])) : std::isnan(bfloat16_to_float(all[i]));
      expected[i] = nan ? static_cast<uint16_t>(all[i] | quiet_bit) : all[i];
    }
    reduce_with(kernels, dtype, HCOMM_MAX, got.data(), all.data(), all.data(), all.size(), 0);
    for (uint32_t i = 0; i < 65536; ++i) ASSERT_EQ(expected[i], got[i]) << "encoding " << hex(i);
  }
}

INSTANTIATE_TEST_SUITE_P(AllIsas, ConversionKernelTest, ::testing::ValuesIn(runnable_isas()),
                         [](const auto& test) { return std::string(isa_name(test.param)); });

// ---------------------------------------------------------------------------
// Conversions of the scalar API.

// The exact value of an encoding with `exponent_bits` and `mantissa_bits`,
// from the definition of the format.
double decode_by_definition(uint16_t bits, int exponent_bits, int mantissa_bits) {
  const int bias = (1 << (exponent_bits - 1)) - 1;
  const int exponent = (bits >> mantissa_bits) & ((1 << exponent_bits) - 1);
  const int mantissa = bits & ((1 << mantissa_bits) - 1);
  const double sign = (bits >> (exponent_bits + mantissa_bits)) ? -1.0 : 1.0;
  if (exponent == (1 << exponent_bits) - 1)
    return mantissa ? std::numeric_limits<double>::quiet_NaN() : sign * std::numeric_limits<double>::infinity();
  if (exponent == 0) return sign * std::ldexp(mantissa, 1 - bias - mantissa_bits);
  return sign * std::ldexp(mantissa + (1 << mantissa_bits), exponent - bias - mantissa_bits);
}

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

struct Format16 {
  const char* name;
  float (*to_float)(uint16_t);
  uint16_t (*from_float)(float);
  int exponent_bits;
  int mantissa_bits;
  uint16_t infinity() const { return static_cast<uint16_t>(((1 << exponent_bits) - 1) << mantissa_bits); }
  uint16_t quiet_bit() const { return static_cast<uint16_t>(1 << (mantissa_bits - 1)); }
};
const Format16 kHalf{"float16", half_to_float, float_to_half, 5, 10};
const Format16 kBFloat16{"bfloat16", bfloat16_to_float, float_to_bfloat16, 8, 7};

// The encoding nearest to a non-NaN f, ties to the even encoding, found by
// binary search over the ordered encodings: shares nothing with the bit tricks
// under test. Beyond the largest finite value the next step is one more ulp:
// whatever rounds there overflows to infinity.
uint16_t nearest_by_search(const Format16& format, float f) {
  const uint16_t sign = std::signbit(f) ? static_cast<uint16_t>(0x8000) : 0;
  const double magnitude = std::fabs(static_cast<double>(f));
  const uint16_t max_finite = format.infinity() - 1;
  auto value = [&](uint32_t encoding) -> double {
    if (encoding <= max_finite) return format.to_float(static_cast<uint16_t>(encoding));
    return 2.0 * format.to_float(max_finite) - format.to_float(max_finite - 1);
  };
  uint32_t low = 0, high = format.infinity();  // value(low) <= magnitude < value(high), unless beyond
  if (magnitude >= value(high)) return sign | format.infinity();
  while (high - low > 1) {
    const uint32_t middle = (low + high) / 2;
    (value(middle) <= magnitude ? low : high) = middle;
  }
  const double below = magnitude - value(low), above = value(high) - magnitude;
  const uint32_t nearest = below < above ? low : above < below ? high : (low % 2 == 0 ? low : high);
  return static_cast<uint16_t>(sign | nearest);
}

class ConversionTest : public ::testing::TestWithParam<Format16> {};

TEST_P(ConversionTest, EveryEncodingDecodesToItsExactValue) {
  const Format16& format = GetParam();
  for (uint32_t i = 0; i < 65536; ++i) {
    const auto bits = static_cast<uint16_t>(i);
    const double exact = decode_by_definition(bits, format.exponent_bits, format.mantissa_bits);
    const float got = format.to_float(bits);
    if (std::isnan(exact)) {
      ASSERT_TRUE(std::isnan(got)) << hex(i);
      ASSERT_TRUE(bits_of(got) & 0x400000) << "NaN " << hex(i) << " did not come back quiet";
    } else {
      ASSERT_EQ(exact, static_cast<double>(got)) << hex(i);
      ASSERT_EQ(std::signbit(exact), std::signbit(got)) << hex(i);
    }
  }
}

TEST_P(ConversionTest, EveryEncodingRoundTrips) {
  const Format16& format = GetParam();
  for (uint32_t i = 0; i < 65536; ++i) {
    const auto bits = static_cast<uint16_t>(i);
    const uint16_t back = format.from_float(format.to_float(bits));
    if (std::isnan(format.to_float(bits)))
      ASSERT_EQ(bits | format.quiet_bit(), back) << "NaN keeps sign and payload, and turns quiet: " << hex(i);
    else
      ASSERT_EQ(bits, back) << hex(i);
  }
}

// Every float whose bits above the rounding point take any value, with the
// bits below it at the patterns that decide rounding: exact, just above,
// just below, at and just past half way, and the largest.
TEST_P(ConversionTest, RoundsLikeNearestEncodingSearch) {
  const Format16& format = GetParam();
  const int dropped = 23 - format.mantissa_bits;
  const uint32_t half_way = 1u << (dropped - 1);
  const uint32_t low_patterns[] = {0, 1, half_way - 1, half_way, half_way + 1, (1u << dropped) - 1};
  for (uint32_t high = 0; high < (1u << (32 - dropped)); ++high) {
    for (uint32_t low : low_patterns) {
      const float f = float_of((high << dropped) | low);
      if (std::isnan(f)) continue;
      ASSERT_EQ(nearest_by_search(format, f), format.from_float(f)) << "float bits " << hex(bits_of(f));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, ConversionTest, ::testing::Values(kHalf, kBFloat16),
                         [](const auto& test) { return std::string(test.param.name); });

struct RoundingCase {
  float input;
  uint16_t expected;
};

TEST(HalfConversionTest, NamedRoundingCases) {
  const RoundingCase cases[] = {
      {1.0f, 0x3c00},
      {1.0f + 0x1p-11f, 0x3c00},             // tie: to the even 1.0
      {1.0f + 3 * 0x1p-11f, 0x3c02},         // tie: to the even 0x3c02
      {1.0f + 0x1p-11f + 0x1p-20f, 0x3c01},  // just past the tie
      {65504.0f, 0x7bff},                    // largest finite
      {65519.0f, 0x7bff},                    // below half way to 65536
      {65520.0f, 0x7c00},                    // half way: to even, which overflows
      {1e6f, 0x7c00},
      {-1e6f, 0xfc00},
      {std::numeric_limits<float>::infinity(), 0x7c00},
      {0x1p-14f, 0x0400},             // smallest normal
      {0x1p-14f - 0x1p-25f, 0x0400},  // tie between 0x3ff and 0x400: to even
      {0x1p-24f, 0x0001},             // smallest subnormal
      {0x1p-25f, 0x0000},             // tie: to the even 0
      {3 * 0x1p-25f, 0x0002},         // tie: to the even 2
      {0x1p-25f + 0x1p-40f, 0x0001},  // just past the tie
      {1e-30f, 0x0000},
      {-1e-30f, 0x8000},
      {-0.0f, 0x8000},
      {float_of(0x7fc00000), 0x7e00},  // quiet NaN
      {float_of(0x7f800001), 0x7e00},  // signalling NaN turns quiet
      {float_of(0x7fa00000), 0x7f00},  // payload's top bits kept
      {float_of(0xffc00000), 0xfe00},  // sign kept
  };
  for (const auto& c : cases) EXPECT_EQ(hex(c.expected), hex(float_to_half(c.input))) << "input " << c.input;
  EXPECT_EQ(bits_of(0x1p-24f), bits_of(half_to_float(0x0001)));
  EXPECT_EQ(bits_of(-0.0f), bits_of(half_to_float(0x8000)));
  EXPECT_EQ(bits_of(65504.0f), bits_of(half_to_float(0x7bff)));
  EXPECT_EQ(bits_of(-std::numeric_limits<float>::infinity()), bits_of(half_to_float(0xfc00)));
  EXPECT_EQ(0x7fc02000u, bits_of(half_to_float(0x7c01)));  // signalling NaN turns quiet, payload kept
}

TEST(BFloat16ConversionTest, NamedRoundingCases) {
  const RoundingCase cases[] = {
      {1.0f, 0x3f80},
      {1.0f + 0x1p-8f, 0x3f80},             // tie: to the even 1.0
      {1.0f + 3 * 0x1p-8f, 0x3f82},         // tie: to the even 0x3f82
      {1.0f + 0x1p-8f + 0x1p-20f, 0x3f81},  // just past the tie
      {float_of(0x7f7f7fff), 0x7f7f},       // below half way past the largest finite
      {float_of(0x7f7fffff), 0x7f80},       // rounds to infinity
      {float_of(0x00008000), 0x0000},       // subnormal tie: to the even 0
      {float_of(0x00018000), 0x0002},       // subnormal tie: to the even 2
      {float_of(0x00010001), 0x0001},
      {-0.0f, 0x8000},
      {-std::numeric_limits<float>::infinity(), 0xff80},
      {float_of(0x7f800001), 0x7fc0},  // signalling NaN with a low payload: still NaN, quiet
      {float_of(0xffc00000), 0xffc0},
  };
  for (const auto& c : cases) EXPECT_EQ(hex(c.expected), hex(float_to_bfloat16(c.input))) << "input " << c.input;
  EXPECT_EQ(0x7fc10000u, bits_of(bfloat16_to_float(0x7f81)));  // signalling NaN turns quiet
}

// ---------------------------------------------------------------------------
// Semantics through the public entry points.

template <class T>
std::vector<T> reduce_public(hcomm_dtype_t dtype, hcomm_op_t op, std::vector<T> a, const std::vector<T>& b,
                             int divisor) {
  reduce(dtype, op, a.data(), a.data(), b.data(), a.size(), divisor);
  return a;
}

TEST(ReduceTest, IntegerAverageTruncatesTowardZero) {
  EXPECT_EQ((std::vector<int32_t>{-3, 3, 0, 2, -2}),
            reduce_public<int32_t>(HCOMM_INT32, HCOMM_AVG, {-7, 7, -1, 5, -4}, {0, 0, 0, 0, -1}, 2));
  EXPECT_EQ((std::vector<int64_t>{-333333333333}),
            reduce_public<int64_t>(HCOMM_INT64, HCOMM_AVG, {-999999999999}, {-1}, 3));
}

TEST(ReduceTest, IntegerAverageDividesTheWrappedSum) {
  EXPECT_EQ((std::vector<int8_t>{28}),
            reduce_public<int8_t>(HCOMM_INT8, HCOMM_AVG, {-100}, {-100}, 2));  // -200 wraps to 56
  EXPECT_EQ((std::vector<uint8_t>{14}),
            reduce_public<uint8_t>(HCOMM_UINT8, HCOMM_AVG, {200}, {100}, 3));  // 300 wraps to 44
  EXPECT_EQ((std::vector<int8_t>{0}),
            reduce_public<int8_t>(HCOMM_INT8, HCOMM_AVG, {100}, {20}, 1000));  // divisor wider than int8
}

TEST(ReduceTest, IntegerOverflowWraps) {
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max(), kMin = std::numeric_limits<int32_t>::min();
  EXPECT_EQ((std::vector<int32_t>{kMin, kMax}),
            reduce_public<int32_t>(HCOMM_INT32, HCOMM_SUM, {kMax, kMin}, {1, -1}, 0));
  EXPECT_EQ((std::vector<uint64_t>{0}),
            reduce_public<uint64_t>(HCOMM_UINT64, HCOMM_PROD, {1ull << 32}, {1ull << 32}, 0));
}

TEST(ReduceTest, AverageWithoutDivisorIsTheSum) {
  EXPECT_EQ((std::vector<int32_t>{-7, 12}), reduce_public<int32_t>(HCOMM_INT32, HCOMM_AVG, {-7, 5}, {0, 7}, 0));
  EXPECT_EQ((std::vector<double>{3.0}), reduce_public<double>(HCOMM_FLOAT64, HCOMM_AVG, {1.0}, {2.0}, 0));
}

TEST(ReduceTest, FloatAverageDivides) {
  EXPECT_EQ((std::vector<float>{1.5f, -0.25f}), reduce_public<float>(HCOMM_FLOAT32, HCOMM_AVG, {1, 0.5f}, {2, -1}, 2));
  // (1 + 2^-10) / 2 is exact in float16: 0.5 + 2^-11.
  EXPECT_EQ((std::vector<uint16_t>{0x3801}), reduce_public<uint16_t>(HCOMM_FLOAT16, HCOMM_AVG, {0x3c00}, {0x1400}, 2));
  // 1 / 3 rounds once, from float, to the nearest bfloat16.
  EXPECT_EQ((std::vector<uint16_t>{float_to_bfloat16(1.0f / 3.0f)}),
            reduce_public<uint16_t>(HCOMM_BFLOAT16, HCOMM_AVG, {0x3f80}, {0x0000}, 3));
}

TEST(ReduceTest, FloatMinMaxPropagateNaNAndOrderZeros) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto min =
      reduce_public<float>(HCOMM_FLOAT32, HCOMM_MIN, {nan, 1, -0.0f, 0.0f, 2}, {1, nan, 0.0f, -0.0f, -3}, 0);
  EXPECT_TRUE(std::isnan(min[0]));
  EXPECT_TRUE(std::isnan(min[1]));
  EXPECT_TRUE(std::signbit(min[2]) && min[2] == 0);
  EXPECT_TRUE(std::signbit(min[3]) && min[3] == 0);
  EXPECT_EQ(-3, min[4]);
  const auto max =
      reduce_public<float>(HCOMM_FLOAT32, HCOMM_MAX, {nan, 1, -0.0f, 0.0f, 2}, {1, nan, 0.0f, -0.0f, -3}, 0);
  EXPECT_TRUE(std::isnan(max[0]));
  EXPECT_TRUE(std::isnan(max[1]));
  EXPECT_TRUE(!std::signbit(max[2]) && max[2] == 0);
  EXPECT_TRUE(!std::signbit(max[3]) && max[3] == 0);
  EXPECT_EQ(2, max[4]);
}

TEST(ReduceTest, DivideDividesInPlace) {
  std::vector<int32_t> ints{-7, 7, 9};
  divide(HCOMM_INT32, ints.data(), ints.size(), 2);
  EXPECT_EQ((std::vector<int32_t>{-3, 3, 4}), ints);
  std::vector<double> doubles{1.0, -3.0};
  divide(HCOMM_FLOAT64, doubles.data(), doubles.size(), 4);
  EXPECT_EQ((std::vector<double>{0.25, -0.75}), doubles);
}

TEST(ReduceTest, TheBestIsaRuns) {
  EXPECT_NE(nullptr, kernels_for(Isa::kPortable));
  EXPECT_NE(nullptr, kernels_for(best_isa())) << isa_name(best_isa());
}

// ---------------------------------------------------------------------------
// Bad arguments: a clear error naming the argument, nothing written.

template <class F>
void expect_invalid_argument(F&& call, const char* mentions) {
  try {
    call();
    ADD_FAILURE() << "no error; expected one mentioning '" << mentions << "'";
  } catch (const Error& e) {
    EXPECT_EQ(HCOMM_ERR_INVALID_ARGUMENT, e.code()) << e.what();
    EXPECT_NE(std::string::npos, std::string(e.what()).find(mentions)) << e.what();
  }
}

TEST(ReduceTest, RejectsBadArguments) {
  float a[4] = {1, 2, 3, 4}, b[4] = {1, 1, 1, 1};
  expect_invalid_argument([&] { reduce(static_cast<hcomm_dtype_t>(10), HCOMM_SUM, a, a, b, 4, 0); }, "dtype 10");
  expect_invalid_argument([&] { reduce(static_cast<hcomm_dtype_t>(-1), HCOMM_SUM, a, a, b, 4, 0); }, "dtype -1");
  expect_invalid_argument([&] { reduce(HCOMM_FLOAT32, static_cast<hcomm_op_t>(5), a, a, b, 4, 0); }, "op 5");
  expect_invalid_argument([&] { reduce(HCOMM_FLOAT32, HCOMM_SUM, nullptr, a, b, 4, 0); }, "dst is null");
  expect_invalid_argument([&] { reduce(HCOMM_FLOAT32, HCOMM_SUM, a, nullptr, b, 4, 0); }, "a is null");
  expect_invalid_argument([&] { reduce(HCOMM_FLOAT32, HCOMM_SUM, a, a, nullptr, 4, 0); }, "b is null");
  expect_invalid_argument([&] { reduce(HCOMM_FLOAT32, HCOMM_AVG, a, a, b, 4, -2); }, "avg_divisor -2");
  expect_invalid_argument([&] { reduce(HCOMM_FLOAT32, HCOMM_SUM, a + 1, a, b, 3, 0); }, "overlaps a");
  expect_invalid_argument([&] { reduce(HCOMM_FLOAT32, HCOMM_SUM, b, a, b + 1, 3, 0); }, "overlaps b");
  expect_invalid_argument([&] { reduce(HCOMM_FLOAT32, HCOMM_SUM, a, a, b, SIZE_MAX / 2, 0); }, "overflows");
  expect_invalid_argument([&] { divide(HCOMM_FLOAT32, a, 4, 0); }, "divisor 0");
  expect_invalid_argument([&] { divide(static_cast<hcomm_dtype_t>(12), a, 4, 2); }, "dtype 12");
  EXPECT_EQ(1.0f, a[0]);
  EXPECT_EQ(4.0f, a[3]);
}

TEST(ReduceTest, ZeroCountTouchesNothing) {
  EXPECT_NO_THROW(reduce(HCOMM_FLOAT32, HCOMM_SUM, nullptr, nullptr, nullptr, 0, 0));
  EXPECT_NO_THROW(divide(HCOMM_INT8, nullptr, 0, 3));
}

}  // namespace
}  // namespace hcomm::device
