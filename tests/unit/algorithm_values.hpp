// Elements as the harness reads, writes and reduces them: unaligned loads
// and stores, and the ops of hcomm_op_t (AVG sums; its division is separate).
#pragma once

#include <cstdint>
#include <cstring>
#include <ostream>

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

template <class T>
T combine(hcomm_op_t op, T a, T b) {
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
