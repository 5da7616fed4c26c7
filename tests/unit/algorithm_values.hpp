// Elements as the harness reads, writes and reduces them: unaligned loads
// and stores, and the ops of hcomm_op_t (AVG sums; its division is separate).
#pragma once

#include <cstdint>
#include <cstring>

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

}  // namespace hcomm::algotest
