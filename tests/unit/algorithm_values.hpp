// Elements as the harness reads, writes and reduces them: unaligned loads
// and stores, and the ops of hcomm_op_t (AVG sums; its division is separate).
#pragma once

#include <cstdint>
#include <cstring>
#include <ostream>
#include <type_traits>

#include "hcomm/plugin/algorithm.h"
#include "hcomm/types.h"

namespace hcomm::algotest {

template <class T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <class T>
void store(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

// An op of the harness alone, for the collectives that reduce in rank order
// (scan, exscan), on int64: an element stands for a range of ranks
// [lo, hi] (lo * 2^32 + hi + 1; -1 for none), and a op b joins a range
// with the one right after it; any other pair gives -1. It is associative
// and does not commute, so a result names the ranks it reduced only where
// every combination put the lower ranks on the left and left none out.
inline constexpr hcomm_op_t kRankOrderOp = static_cast<hcomm_op_t>(-2);

inline int64_t rank_range(int64_t lo, int64_t hi) { return lo << 32 | (hi + 1); }

inline int64_t join_ranges(int64_t a, int64_t b) {
  if (a < 0 || b < 0 || (a & 0xFFFFFFFF) != b >> 32) return -1;  // a's hi + 1 is b's lo
  return (a >> 32) << 32 | (b & 0xFFFFFFFF);
}

template <class T>
T combine(hcomm_op_t op, T a, T b) {
  if constexpr (std::is_same_v<T, int64_t>)
    if (op == kRankOrderOp) return join_ranges(a, b);
  switch (op) {
    case HCOMM_PROD:
      return a * b;
    case HCOMM_MIN:
      return b < a ? b : a;
    case HCOMM_MAX:
      return a < b ? b : a;
    default:
      return a + b;  // SUM, and AVG before its division
  }
}

// The opaque element the harness reduces with user ops (12 bytes, not a
// power of two): an affine map x -> a*x + b mod 2^32 and a count of the
// inputs in it. HCOMM_OP_USER_ORDERED composes the maps in order (it does
// not commute); HCOMM_OP_USER_COMMUTATIVE multiplies the a's and adds the
// b's. A result in another order, or from a cut element, differs.
struct Record {
  uint32_t a, b, n;
  bool operator==(const Record&) const = default;
};
static_assert(sizeof(Record) == 12);
inline const hcomm_dtype_t kRecordDtype = HCOMM_DTYPE_OPAQUE(sizeof(Record));

inline Record combine(hcomm_op_t op, Record x, Record y) {
  if (op == HCOMM_OP_USER_ORDERED) return {x.a * y.a, x.b * y.a + y.b, x.n + y.n};
  return {x.a * y.a, x.b + y.b, x.n + y.n};
}

inline std::ostream& operator<<(std::ostream& s, const Record& r) {
  return s << "{" << r.a << ", " << r.b << ", " << r.n << "}";
}

}  // namespace hcomm::algotest
