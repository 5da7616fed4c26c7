// The C API's reduction ops: user ops (hcomm_op_create) and local
// reductions on host memory.
#include <cstdint>

#include "core/api/checks.hpp"
#include "core/device/reduce.hpp"
#include "core/device/user_op.hpp"
#include "hcomm/hcomm.h"

using namespace hcomm;
using namespace hcomm::api;

extern "C" {

HCOMM_API hcomm_result_t hcomm_op_create(hcomm_user_op_fn fn, void* user_data, int commutative, hcomm_op_t* op) {
  return c_boundary([&] {
    HCOMM_ARG_CHECK(op, "hcomm_op_create: op is NULL; pass where the new op goes");
    HCOMM_ARG_CHECK(fn, "hcomm_op_create: fn is NULL; pass the function that combines in into inout");
    *op = device::register_op({.fn = fn, .user_data = user_data, .commutative = commutative != 0});
    return HCOMM_SUCCESS;
  });
}

HCOMM_API hcomm_result_t hcomm_op_destroy(hcomm_op_t op) {
  return c_boundary([&] {
    HCOMM_ARG_CHECK(!(static_cast<unsigned>(op) < HCOMM_NUM_OPS),
                    "hcomm_op_destroy: op %s is built in; only ops that hcomm_op_create made are destroyed",
                    op_name(op));
    HCOMM_ARG_CHECK(device::unregister_op(op),
                    "hcomm_op_destroy: op %d is no live user op (never made by hcomm_op_create, or destroyed already)",
                    static_cast<int>(op));
    return HCOMM_SUCCESS;
  });
}

HCOMM_API hcomm_result_t hcomm_reduce_local(const void* in, void* inout, size_t count, hcomm_dtype_t dtype,
                                            hcomm_op_t op) {
  return c_boundary([&] {
    const char* fn = "hcomm_reduce_local";
    check_dtype(fn, dtype);
    const std::shared_ptr<const device::UserOp> user = check_op(fn, op, dtype);
    HCOMM_ARG_CHECK(op != HCOMM_AVG,
                    "%s: HCOMM_AVG divides by a rank count, which a local reduction has none of; pass HCOMM_SUM", fn);
    const size_t bytes = checked_bytes(fn, count, dtype);
    if (count == 0) return HCOMM_SUCCESS;
    HCOMM_ARG_CHECK(in && inout, "%s: %s is NULL with count %zu above 0; pass a buffer of count elements", fn,
                    in ? "inout" : "in", count);
    const auto i = reinterpret_cast<uintptr_t>(in), o = reinterpret_cast<uintptr_t>(inout);
    HCOMM_ARG_CHECK(i == o || i + bytes <= o || o + bytes <= i,
                    "%s: in and inout overlap without being equal; pass separate buffers (or the same one)", fn);
    if (const device::Accelerator* a = device::Accelerator::get(); a && (a->owns(in) || a->owns(inout)))
      HCOMM_THROW(HCOMM_ERR_UNSUPPORTED, "%s: a buffer is %s device memory; local reductions take host memory", fn,
                  a->name());
    device::reduce(device::Reduction{dtype, op, dtype_size(dtype), user.get()}, inout, in, inout, count, 0);
    return HCOMM_SUCCESS;
  });
}

}  // extern "C"
