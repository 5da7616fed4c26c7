// What every C API entry point shares: argument checks whose errors name the
// function and the argument and say what to do, and how a started operation
// completes (blocking, or through a request).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>

#include "core/api/handles.hpp"
#include "core/common/error.hpp"
#include "core/common/names.hpp"
#include "core/device/accelerator.hpp"
#include "core/device/user_op.hpp"
#include "hcomm/hcomm.h"
#include "hcomm/plugin/algorithm.h"

#define HCOMM_ARG_CHECK(cond, ...)                                     \
  do {                                                                 \
    if (!(cond)) HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT, __VA_ARGS__); \
  } while (0)

namespace hcomm::api {

// The largest byte size a call may address (sizes stay far from overflow).
constexpr size_t kMaxBytes = SIZE_MAX >> 1;

comm::Communicator& checked_comm(const char* fn, hcomm_comm_t comm);
void check_dtype(const char* fn, hcomm_dtype_t dtype);
// A built-in op (null), or a live user op (hcomm_op_create), which opaque
// dtypes need.
std::shared_ptr<const device::UserOp> check_op(const char* fn, hcomm_op_t op, hcomm_dtype_t dtype);
// The op a schedule of `user`'s calls is built for: HCOMM_OP_USER_*.
hcomm_op_t schedule_op(const device::UserOp& user);
// `what` names the argument ("root", "peer").
void check_rank(const char* fn, const char* what, int rank, const comm::Communicator& c);
// The bytes of `blocks` blocks of `count` elements, checking that they fit.
size_t checked_bytes(const char* fn, size_t count, hcomm_dtype_t dtype, size_t blocks = 1);

// Not in place; the caller sets in_place and the count arrays where they apply.
hcomm_coll_args_t make_args(hcomm_coll_t coll, size_t count, hcomm_dtype_t dtype, hcomm_op_t op, int root);

// How a call completes: a blocking form may name a stream, a nonblocking form
// hands back a request.
struct Completion {
  hcomm_stream_t stream;
  hcomm_request_t* request;
  bool nonblocking;
};
constexpr Completion blocking(hcomm_stream_t stream) { return {stream, nullptr, false}; }
constexpr Completion nonblocking(hcomm_request_t* request) { return {nullptr, request, true}; }

// Checks the request argument and clears *request.
void check_completion(const char* fn, const Completion& how);
// The accelerator that queues a stream-ordered call's work; throws
// HCOMM_ERR_UNSUPPORTED naming why where there is none.
const device::Accelerator& stream_accelerator(const char* fn);
// Which of a call's buffers are device memory, each asked once. Such
// buffers are staged through host memory: a blocking call does it around its
// operation, a nonblocking or stream-ordered one queues it (StreamOrder).
struct DeviceBuffers {
  const device::Accelerator* accelerator = nullptr;  // null: all are host memory
  uint32_t on_device = 0;                            // bit i: buffers[i]
  bool has(int i) const { return (on_device >> i) & 1u; }
};
DeviceBuffers device_buffers_of(std::initializer_list<const void*> buffers);
// Without a device plugin that has a device: all host memory, at once
// (where the call names a stream, an error: stream_accelerator).
inline DeviceBuffers device_buffers(const char* fn, const Completion& how,
                                    std::initializer_list<const void*> buffers) {
  if (how.stream) stream_accelerator(fn);
  return device::Accelerator::get() ? device_buffers_of(buffers) : DeviceBuffers{};
}
// Whether a call goes to the communicator's StreamOrder: it names a stream,
// or it is nonblocking on device buffers (queued on the device's default
// stream, its request waiting for its ticket).
inline bool queued(const Completion& how, const DeviceBuffers& on_device) {
  return how.stream || (how.nonblocking && on_device.accelerator);
}
// Waits for `op` (blocking form, which then sets *status where given) or
// hands it back as *how.request.
hcomm_result_t complete(comm::Communicator& c, exec::Operation* op, const Completion& how,
                        hcomm_status_t* status = nullptr);
// The same for calls queued on a StreamOrder: a nonblocking form's request
// waits for their ticket.
hcomm_result_t complete(comm::StreamOrder& order, const std::shared_ptr<comm::StreamOrder::Ticket>& ticket,
                        comm::Communicator& c, const Completion& how);
// The same for a message of point to point in matching mode; a blocking
// form sets *status (may be null), also when the receive fails alone.
hcomm_result_t complete(comm::Communicator& c, p2p::Message* m, const Completion& how, hcomm_status_t* status);

}  // namespace hcomm::api
