// Point to point of the C API: checks, then the communicator's one-step
// schedules. A rank may send to itself.
#include "core/api/checks.hpp"
#include "core/comm/communicator.hpp"

namespace hcomm::api {
namespace {

// A send (sending) or a receive into buf. Device memory goes through a host
// staging buffer: copied there before a send, from there after a receive.
hcomm_result_t p2p(const char* fn, bool sending, void* buf, size_t count, hcomm_dtype_t dtype, int peer, int tag,
                   hcomm_comm_t comm, const Completion& how) {
  return c_boundary([&] {
    check_completion(fn, how);
    comm::Communicator& c = checked_comm(fn, comm);
    check_dtype(fn, dtype);
    const size_t bytes = checked_bytes(fn, count, dtype);
    HCOMM_ARG_CHECK(buf || bytes == 0, "%s: buf is NULL but count is not 0", fn);
    check_rank(fn, "peer", peer, c);
    HCOMM_ARG_CHECK(tag >= 0, "%s: tag %d is outside 0..HCOMM_TAG_MAX (%d)", fn, tag, HCOMM_TAG_MAX);
    // A point-to-point call's args name the peer as root.
    const hcomm_coll_args_t args = make_args(HCOMM_COLL_SENDRECV, count, dtype, HCOMM_SUM, peer);
    auto start = [&](void* b) { return sending ? c.send(args, b, tag) : c.recv(args, b, tag); };
    const device::Accelerator* accelerator = bytes ? device_buffers(fn, how, {buf}).accelerator : nullptr;
    if (!accelerator) return complete(c, start(buf), how);
    void* host = accelerator->staging(bytes, 0);
    if (sending) accelerator->copy(host, buf, bytes);
    const hcomm_result_t rc = complete(c, start(host), how);
    if (!sending) accelerator->copy(buf, host, bytes);
    return rc;
  });
}

}  // namespace
}  // namespace hcomm::api

using hcomm::api::blocking;
using hcomm::api::nonblocking;
using hcomm::api::p2p;

extern "C" {

HCOMM_API hcomm_result_t hcomm_send(const void* buf, size_t count, hcomm_dtype_t dtype, int peer, int tag,
                                    hcomm_comm_t comm, hcomm_stream_t stream) {
  return p2p("hcomm_send", true, const_cast<void*>(buf), count, dtype, peer, tag, comm, blocking(stream));
}

HCOMM_API hcomm_result_t hcomm_isend(const void* buf, size_t count, hcomm_dtype_t dtype, int peer, int tag,
                                     hcomm_comm_t comm, hcomm_request_t* request) {
  return p2p("hcomm_isend", true, const_cast<void*>(buf), count, dtype, peer, tag, comm, nonblocking(request));
}

HCOMM_API hcomm_result_t hcomm_recv(void* buf, size_t count, hcomm_dtype_t dtype, int peer, int tag,
                                    hcomm_comm_t comm, hcomm_stream_t stream) {
  return p2p("hcomm_recv", false, buf, count, dtype, peer, tag, comm, blocking(stream));
}

HCOMM_API hcomm_result_t hcomm_irecv(void* buf, size_t count, hcomm_dtype_t dtype, int peer, int tag,
                                     hcomm_comm_t comm, hcomm_request_t* request) {
  return p2p("hcomm_irecv", false, buf, count, dtype, peer, tag, comm, nonblocking(request));
}

}  // extern "C"
