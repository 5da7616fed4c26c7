// The names of the public enums' values (collectives, dtypes, reduction
// ops), as messages print them and HCOMM_TUNE writes collectives, and the
// dtypes' element sizes: one table each for every layer of the core.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hcomm/plugin/algorithm.h"
#include "hcomm/types.h"

namespace hcomm {

namespace names {
inline constexpr const char* kColls[HCOMM_NUM_COLLS] = {
    "allreduce", "broadcast", "reduce",     "allgather",        "reduce_scatter", "alltoall", "gather", "scatter",
    "barrier",   "sendrecv",  "allgatherv", "reduce_scatter_v", "alltoallv",      "scan",     "exscan"};
inline constexpr const char* kDtypes[HCOMM_NUM_DTYPES] = {"int8",   "uint8",   "int32",    "uint32",  "int64",
                                                          "uint64", "float16", "bfloat16", "float32", "float64"};
inline constexpr size_t kDtypeSizes[HCOMM_NUM_DTYPES] = {1, 1, 4, 4, 8, 8, 2, 2, 4, 8};
inline constexpr const char* kOps[HCOMM_NUM_OPS] = {"sum", "prod", "min", "max", "avg"};
}  // namespace names

// HCOMM_DTYPE_OPAQUE(bytes) for bytes 1..HCOMM_OPAQUE_MAX_BYTES.
inline bool is_opaque(hcomm_dtype_t dtype) {
  const int64_t bytes = int64_t{dtype} - HCOMM_DTYPE_OPAQUE_BASE;
  return bytes >= 1 && bytes <= HCOMM_OPAQUE_MAX_BYTES;
}
// User ops' handles (hcomm_op_create) lie from here up; the algorithms'
// stand-ins for them (HCOMM_OP_USER_*) below.
inline constexpr int32_t kFirstUserOp = 0x40000000;
inline bool is_user_op(hcomm_op_t op) { return int32_t{op} >= kFirstUserOp; }

// "unknown" for a value outside its enum.
inline const char* coll_name(hcomm_coll_t coll) {
  return static_cast<unsigned>(coll) < HCOMM_NUM_COLLS ? names::kColls[coll] : "unknown";
}
inline const char* dtype_name(hcomm_dtype_t dtype) {
  if (is_opaque(dtype)) return "opaque";
  return static_cast<unsigned>(dtype) < HCOMM_NUM_DTYPES ? names::kDtypes[dtype] : "unknown";
}
inline const char* op_name(hcomm_op_t op) {
  if (op == HCOMM_OP_USER_COMMUTATIVE) return "user (commutative)";
  if (op == HCOMM_OP_USER_ORDERED) return "user (not commutative)";
  if (is_user_op(op)) return "user";
  return static_cast<unsigned>(op) < HCOMM_NUM_OPS ? names::kOps[op] : "unknown";
}
// Bytes per element; 0 for an unknown dtype.
inline size_t dtype_size(hcomm_dtype_t dtype) {
  if (is_opaque(dtype)) return static_cast<size_t>(int64_t{dtype} - HCOMM_DTYPE_OPAQUE_BASE);
  return static_cast<unsigned>(dtype) < HCOMM_NUM_DTYPES ? names::kDtypeSizes[dtype] : 0;
}

// The collective named `name` ("allreduce"); false when none is.
inline bool coll_from_name(std::string_view name, hcomm_coll_t* out) {
  for (int c = 0; c < HCOMM_NUM_COLLS; ++c)
    if (name == names::kColls[c]) return *out = static_cast<hcomm_coll_t>(c), true;
  return false;
}

}  // namespace hcomm
