// User reduction ops (hcomm_op_create): host functions that the executor
// calls wherever a built-in op's kernel would run, and the registry that
// hands out their values. An operation holds its op for as long as it runs,
// so an op destroyed meanwhile still serves it.
#pragma once

#include <cstddef>
#include <memory>

#include "hcomm/hcomm.h"

namespace hcomm::device {

struct UserOp {
  hcomm_user_op_fn fn;
  void* user_data;
  bool commutative;
};

// A new op's value (names.hpp: is_user_op); thread-safe.
hcomm_op_t register_op(const UserOp& op);
// False when `op` is no live user op.
bool unregister_op(hcomm_op_t op);
// The live user op of that value, or null.
std::shared_ptr<const UserOp> find_op(hcomm_op_t op);

// dst = a op b over `count` elements of `elem_bytes` bytes, through op's
// function, a being its `in` (the lower ranks' operand). dst may be a or b
// (or both), and must not otherwise overlap them. The function never sees
// in and inout overlap: where dst is a, b goes through a copy (or, for a
// commutative op, the operands swap).
void reduce_user(const UserOp& op, hcomm_dtype_t dtype, size_t elem_bytes, void* dst, const void* a, const void* b,
                 size_t count);

}  // namespace hcomm::device
