// What every C API entry point shares: argument checks whose errors name the
// function and the argument and say what to do, and how a started operation
// completes (blocking, or through a request).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include "core/api/handles.hpp"
#include "core/common/error.hpp"
#include "core/common/names.hpp"
#include "core/device/accelerator.hpp"
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
void check_op(const char* fn, hcomm_op_t op);
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

// Checks the stream or request argument and clears *request.
void check_completion(const char* fn, const Completion& how);
// The accelerator whose memory one of `buffers` is, or nullptr where all
// are host memory (no device plugin with a device: nullptr at once). Such
// buffers are staged through host memory, which a blocking call does around
// its operation: a nonblocking or stream-ordered one gets HCOMM_ERR_UNSUPPORTED.
const device::Accelerator* device_buffers_of(const char* fn, const Completion& how,
                                             std::initializer_list<const void*> buffers);
inline const device::Accelerator* device_buffers(const char* fn, const Completion& how,
                                                 std::initializer_list<const void*> buffers) {
  return device::Accelerator::get() ? device_buffers_of(fn, how, buffers) : nullptr;
}
// Waits for `op` (blocking form) or hands it back as *how.request.
hcomm_result_t complete(comm::Communicator& c, exec::Operation* op, const Completion& how);

}  // namespace hcomm::api
