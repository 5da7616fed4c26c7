#include "core/api/checks.hpp"

#include "core/comm/communicator.hpp"

namespace hcomm::api {

comm::Communicator& checked_comm(const char* fn, hcomm_comm_t comm) {
  HCOMM_ARG_CHECK(comm && comm->impl, "%s: comm is NULL (create one with hcomm_comm_init_rank or hcomm_comm_init_env)",
                  fn);
  return *comm->impl;
}

void check_dtype(const char* fn, hcomm_dtype_t dtype) {
  HCOMM_ARG_CHECK(static_cast<unsigned>(dtype) < HCOMM_NUM_DTYPES || is_opaque(dtype),
                  "%s: dtype %d is not an hcomm_dtype_t (HCOMM_INT8=0 .. HCOMM_FLOAT64=9, or HCOMM_DTYPE_OPAQUE(bytes) "
                  "for 1 to %d bytes)",
                  fn, static_cast<int>(dtype), HCOMM_OPAQUE_MAX_BYTES);
}

std::shared_ptr<const device::UserOp> check_op(const char* fn, hcomm_op_t op, hcomm_dtype_t dtype) {
  if (static_cast<unsigned>(op) < HCOMM_NUM_OPS) {
    HCOMM_ARG_CHECK(!is_opaque(dtype),
                    "%s: op %s on an opaque dtype (%zu-byte elements): opaque elements reduce with a user op only; "
                    "make one with hcomm_op_create",
                    fn, op_name(op), dtype_size(dtype));
    return nullptr;
  }
  std::shared_ptr<const device::UserOp> user = device::find_op(op);
  HCOMM_ARG_CHECK(user,
                  "%s: op %d is not an hcomm_op_t (HCOMM_SUM=0 .. HCOMM_AVG=4) nor a live user op (one that "
                  "hcomm_op_create made and hcomm_op_destroy has not destroyed)",
                  fn, static_cast<int>(op));
  return user;
}

hcomm_op_t schedule_op(const device::UserOp& user) {
  return user.commutative ? HCOMM_OP_USER_COMMUTATIVE : HCOMM_OP_USER_ORDERED;
}

void check_rank(const char* fn, const char* what, int rank, const comm::Communicator& c) {
  HCOMM_ARG_CHECK(rank >= 0 && rank < c.size(), "%s: %s %d is not a rank of this communicator (0..%d)", fn, what, rank,
                  c.size() - 1);
}

size_t checked_bytes(const char* fn, size_t count, hcomm_dtype_t dtype, size_t blocks) {
  // A multiplication with a check rather than divisions: this runs on every call.
  size_t bytes = 0;
  HCOMM_ARG_CHECK(!__builtin_mul_overflow(count, dtype_size(dtype) * blocks, &bytes) && bytes <= kMaxBytes,
                  "%s: count %zu of %s%s overflows the byte size; split the call", fn, count, dtype_name(dtype),
                  blocks > 1 ? " per rank" : "");
  return bytes;
}

hcomm_coll_args_t make_args(hcomm_coll_t coll, size_t count, hcomm_dtype_t dtype, hcomm_op_t op, int root) {
  return hcomm_coll_args_t{.size = sizeof(hcomm_coll_args_t),
                           .coll = coll,
                           .count = count,
                           .dtype = dtype,
                           .dtype_size = dtype_size(dtype),
                           .op = op,
                           .root = root,
                           .mem_kind = HCOMM_MEM_HOST};
}

void check_completion(const char* fn, const Completion& how) {
  HCOMM_ARG_CHECK(!how.nonblocking || how.request, "%s: request is NULL", fn);
  if (how.request) *how.request = nullptr;
}

const device::Accelerator& stream_accelerator(const char* fn) {
  const device::Accelerator* accelerator = device::Accelerator::get();
  if (!accelerator)
    HCOMM_THROW(HCOMM_ERR_UNSUPPORTED,
                "%s: stream is not NULL, but no device plugin sees a device (see hcomm-info): pass a NULL stream for "
                "host-ordered execution",
                fn);
  if (!accelerator->streams())
    HCOMM_THROW(HCOMM_ERR_UNSUPPORTED,
                "%s: device plugin %s queues no stream-ordered work (its interface predates plugin ABI 1.15), which a "
                "stream and a nonblocking call on device buffers need: pass a NULL stream, or use the blocking form",
                fn, accelerator->name());
  return *accelerator;
}

DeviceBuffers device_buffers_of(std::initializer_list<const void*> buffers) {
  const device::Accelerator* accelerator = device::Accelerator::get();
  DeviceBuffers out;
  int i = 0;
  for (const void* b : buffers) out.on_device |= uint32_t{accelerator->owns(b)} << i++;
  if (out.on_device) out.accelerator = accelerator;
  return out;
}

hcomm_result_t complete(comm::StreamOrder& order, const std::shared_ptr<comm::StreamOrder::Ticket>& ticket,
                        comm::Communicator& c, const Completion& how) {
  if (how.request)
    *how.request = new hcomm_request{&c, nullptr, nullptr, &order, ticket};
  return HCOMM_SUCCESS;
}

hcomm_result_t complete(comm::Communicator& c, exec::Operation* op, const Completion& how, hcomm_status_t* status) {
  if (how.request)
    *how.request = new hcomm_request{&c, op};
  else
    c.wait(op, status);
  return HCOMM_SUCCESS;
}

hcomm_result_t complete(comm::Communicator& c, p2p::Message* m, const Completion& how, hcomm_status_t* status) {
  if (how.request)
    *how.request = new hcomm_request{&c, nullptr, m};
  else
    c.wait(m, status);
  return HCOMM_SUCCESS;
}

}  // namespace hcomm::api
