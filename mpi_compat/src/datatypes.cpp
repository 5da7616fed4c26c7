#include "mpi_compat/src/datatypes.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include "mpi_compat/src/state.hpp"

namespace hcomm::mpi {
namespace {

constexpr hcomm_dtype_t kNoDtype = HCOMM_NUM_DTYPES;

struct Pair {
  float f;
  int i;
};
struct DoublePair {
  double d;
  int i;
};
struct LongPair {
  long l;
  int i;
};
struct ShortPair {
  short s;
  int i;
};
struct LongDoublePair {
  long double d;
  int i;
};

#define BASIC(h, c, d) \
  { h, #h, sizeof(c), sizeof(c), 0, d }
#define PAIR(h, s, v) \
  { h, #h, sizeof(v) + sizeof(int), sizeof(s), kPair, kNoDtype }
constexpr TypeInfo table[] = {
    BASIC(MPI_CHAR, char, kNoDtype),
    {MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", 1, 1, kInteger, HCOMM_INT8},
    {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", 1, 1, kInteger, HCOMM_UINT8},
    {MPI_BYTE, "MPI_BYTE", 1, 1, kByte, kNoDtype},
    BASIC(MPI_WCHAR, wchar_t, kNoDtype),
    {MPI_SHORT, "MPI_SHORT", sizeof(short), sizeof(short), kInteger, kNoDtype},
    {MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", sizeof(short), sizeof(short), kInteger, kNoDtype},
    {MPI_INT, "MPI_INT", 4, 4, kInteger, HCOMM_INT32},
    {MPI_UNSIGNED, "MPI_UNSIGNED", 4, 4, kInteger, HCOMM_UINT32},
    {MPI_LONG, "MPI_LONG", 8, 8, kInteger, HCOMM_INT64},
    {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", 8, 8, kInteger, HCOMM_UINT64},
    {MPI_LONG_LONG_INT, "MPI_LONG_LONG", 8, 8, kInteger, HCOMM_INT64},
    {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", 8, 8, kInteger, HCOMM_UINT64},
    {MPI_FLOAT, "MPI_FLOAT", 4, 4, kFloating, HCOMM_FLOAT32},
    {MPI_DOUBLE, "MPI_DOUBLE", 8, 8, kFloating, HCOMM_FLOAT64},
    {MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", sizeof(long double), sizeof(long double), kFloating, kNoDtype},
    {MPI_PACKED, "MPI_PACKED", 1, 1, kNone, kNoDtype},
    {MPI_INT8_T, "MPI_INT8_T", 1, 1, kInteger, HCOMM_INT8},
    {MPI_INT16_T, "MPI_INT16_T", 2, 2, kInteger, kNoDtype},
    {MPI_INT32_T, "MPI_INT32_T", 4, 4, kInteger, HCOMM_INT32},
    {MPI_INT64_T, "MPI_INT64_T", 8, 8, kInteger, HCOMM_INT64},
    {MPI_UINT8_T, "MPI_UINT8_T", 1, 1, kInteger, HCOMM_UINT8},
    {MPI_UINT16_T, "MPI_UINT16_T", 2, 2, kInteger, kNoDtype},
    {MPI_UINT32_T, "MPI_UINT32_T", 4, 4, kInteger, HCOMM_UINT32},
    {MPI_UINT64_T, "MPI_UINT64_T", 8, 8, kInteger, HCOMM_UINT64},
    {MPI_C_BOOL, "MPI_C_BOOL", 1, 1, kLogical, kNoDtype},
    {MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", 8, 8, kComplex, kNoDtype},
    {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", 16, 16, kComplex, kNoDtype},
    {MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", 2 * sizeof(long double), 2 * sizeof(long double), kComplex,
     kNoDtype},
    {MPI_AINT, "MPI_AINT", 8, 8, kInteger, HCOMM_INT64},
    {MPI_OFFSET, "MPI_OFFSET", 8, 8, kInteger, HCOMM_INT64},
    {MPI_COUNT, "MPI_COUNT", 8, 8, kInteger, HCOMM_INT64},
    {MPI_CXX_BOOL, "MPI_CXX_BOOL", 1, 1, kLogical, kNoDtype},
    {MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX", 8, 8, kComplex, kNoDtype},
    {MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX", 16, 16, kComplex, kNoDtype},
    {MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX", 2 * sizeof(long double), 2 * sizeof(long double),
     kComplex, kNoDtype},
    PAIR(MPI_FLOAT_INT, Pair, float),
    PAIR(MPI_DOUBLE_INT, DoublePair, double),
    PAIR(MPI_LONG_INT, LongPair, long),
    PAIR(MPI_SHORT_INT, ShortPair, short),
    {MPI_2INT, "MPI_2INT", 8, 8, kPair, kNoDtype},
    PAIR(MPI_LONG_DOUBLE_INT, LongDoublePair, long double),
    {MPI_COMPLEX, "MPI_COMPLEX", 8, 8, kComplex, kNoDtype},
    {MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", 16, 16, kComplex, kNoDtype},
    {MPI_LOGICAL, "MPI_LOGICAL", 4, 4, kLogical, kNoDtype},
    {MPI_REAL, "MPI_REAL", 4, 4, kFloating, HCOMM_FLOAT32},
    {MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", 8, 8, kFloating, HCOMM_FLOAT64},
    {MPI_INTEGER, "MPI_INTEGER", 4, 4, kFortranInteger, HCOMM_INT32},
    {MPI_2INTEGER, "MPI_2INTEGER", 8, 8, kPair, kNoDtype},
    {MPI_2REAL, "MPI_2REAL", 8, 8, kPair, kNoDtype},
    {MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", 16, 16, kPair, kNoDtype},
    {MPI_CHARACTER, "MPI_CHARACTER", 1, 1, kNone, kNoDtype},
    {MPI_REAL4, "MPI_REAL4", 4, 4, kFloating, HCOMM_FLOAT32},
    {MPI_REAL8, "MPI_REAL8", 8, 8, kFloating, HCOMM_FLOAT64},
    {MPI_REAL16, "MPI_REAL16", 16, 16, kFloating, kNoDtype},
    {MPI_COMPLEX8, "MPI_COMPLEX8", 8, 8, kComplex, kNoDtype},
    {MPI_COMPLEX16, "MPI_COMPLEX16", 16, 16, kComplex, kNoDtype},
    {MPI_COMPLEX32, "MPI_COMPLEX32", 32, 32, kComplex, kNoDtype},
    {MPI_INTEGER1, "MPI_INTEGER1", 1, 1, kFortranInteger, HCOMM_INT8},
    {MPI_INTEGER2, "MPI_INTEGER2", 2, 2, kFortranInteger, kNoDtype},
    {MPI_INTEGER4, "MPI_INTEGER4", 4, 4, kFortranInteger, HCOMM_INT32},
    {MPI_INTEGER8, "MPI_INTEGER8", 8, 8, kFortranInteger, HCOMM_INT64},
};
#undef BASIC
#undef PAIR

}  // namespace

constexpr std::array<const TypeInfo*, kPredefinedSlots + 1> predefined_types = [] {
  std::array<const TypeInfo*, kPredefinedSlots + 1> slots{};  // the last: no predefined handle
  for (const TypeInfo& t : table) {
    const size_t slot = predefined_slot(t.handle);
    if (slot == kPredefinedSlots || slots[slot]) throw "a predefined type outside MPICH's handles, or two in one slot";
    slots[slot] = &t;
  }
  return slots;
}();

namespace {

// A predefined type's layout: one run, or for a pair with padding (struct
// { value; int; }) the value and the int.
Layout predefined_layout(const TypeInfo& t) {
  Layout l;
  l.basic = t.handle;
  l.size = t.size;
  l.extent = l.true_extent = static_cast<MPI_Aint>(t.extent);
  if (t.size == t.extent) {
    l.runs = {{0, t.size}};
    l.align = t.category == kComplex || t.category == kPair ? t.size / 2 : t.size;
  } else {
    const size_t value = t.size - sizeof(int);
    l.runs = {{0, value}, {static_cast<MPI_Aint>((value + 3) / 4 * 4), sizeof(int)}};
    l.align = std::max(value, sizeof(int));
  }
  if (t.category == kPair) {  // a value and an int (MPI_FLOAT_INT, ...), or two halves (MPI_2INT, ...)
    const size_t value = predefined_slot(t.handle) >= 256 ? t.size - sizeof(int) : t.size / 2;
    add_basics(l.basics, value, 1);
    add_basics(l.basics, t.size - value, 1);
  } else {
    add_basics(l.basics, t.size, 1);
  }
  return l;
}

}  // namespace

const TypeInfo& derived_type_of(MPI_Datatype type, const char* argument) {
  if (const TypeInfo* t = derived_type_info(type, argument)) return *t;
  if (type == MPI_DATATYPE_NULL) fail(MPI_ERR_TYPE, "%s is MPI_DATATYPE_NULL", argument);
  fail(MPI_ERR_TYPE, "%s 0x%x is no datatype (never made, or freed)", argument, static_cast<unsigned>(type));
}

LayoutPtr layout_of(MPI_Datatype type, const char* argument) {
  static std::array<LayoutPtr, kPredefinedSlots> predefined;
  if (const TypeInfo* t = find_predefined(type)) {
    LayoutPtr& l = predefined[predefined_slot(type)];
    if (!l) l = std::make_shared<const Layout>(predefined_layout(*t));
    return l;
  }
  if (LayoutPtr l = derived_layout(type)) return l;
  if (type == MPI_DATATYPE_NULL) fail(MPI_ERR_TYPE, "%s is MPI_DATATYPE_NULL", argument);
  fail(MPI_ERR_TYPE, "%s 0x%x is no datatype (never made, or freed)", argument, static_cast<unsigned>(type));
}

void pack(const void* buf, size_t first, size_t count, const Layout& l, unsigned char* out) {
  out += first * l.size;
  for (size_t k = first; k < first + count; ++k) {
    const unsigned char* element = static_cast<const unsigned char*>(buf) + static_cast<MPI_Aint>(k) * l.extent;
    for (const Layout::Run& run : l.runs) {
      std::memcpy(out, element + run.offset, run.bytes);
      out += run.bytes;
    }
  }
}

void add_basics(std::vector<Layout::Basics>& basics, size_t bytes, size_t n) {
  if (!n) return;
  if (!basics.empty() && basics.back().bytes == bytes)
    basics.back().count += n;
  else
    basics.push_back({bytes, n});
}

MPI_Count basic_elements(const Layout& l, MPI_Count bytes) {
  if (l.size == 0) return 0;
  MPI_Count per_element = 0;
  for (const Layout::Basics& b : l.basics) per_element += static_cast<MPI_Count>(b.count);
  MPI_Count n = bytes / static_cast<MPI_Count>(l.size) * per_element;
  size_t rest = static_cast<size_t>(bytes % static_cast<MPI_Count>(l.size));
  for (const Layout::Basics& b : l.basics) {
    const size_t whole = std::min(rest / b.bytes, b.count);
    n += static_cast<MPI_Count>(whole);
    rest -= whole * b.bytes;
    if (whole < b.count) break;
  }
  return rest ? MPI_UNDEFINED : n;
}

MPI_Count basic_elements_bytes(const Layout& l, MPI_Count count) {
  MPI_Count per_element = 0;
  for (const Layout::Basics& b : l.basics) per_element += static_cast<MPI_Count>(b.count);
  if (per_element == 0) return 0;
  MPI_Count bytes = count / per_element * static_cast<MPI_Count>(l.size);
  size_t rest = static_cast<size_t>(count % per_element);
  for (const Layout::Basics& b : l.basics) {
    const size_t n = std::min(rest, b.count);
    bytes += static_cast<MPI_Count>(n * b.bytes);
    rest -= n;
  }
  return bytes;
}

void unpack(const unsigned char* in, size_t first, size_t count, size_t bytes, const Layout& l, void* buf) {
  in += first * l.size;
  for (size_t k = first; k < first + count && bytes; ++k) {
    unsigned char* element = static_cast<unsigned char*>(buf) + static_cast<MPI_Aint>(k) * l.extent;
    for (const Layout::Run& run : l.runs) {
      const size_t n = std::min(run.bytes, bytes);
      std::memcpy(element + run.offset, in, n);
      in += n;
      bytes -= n;
      if (!bytes) return;
    }
  }
}

}  // namespace hcomm::mpi
