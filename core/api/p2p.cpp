// Point to point of the C API: checks, then the communicator: its one-step
// schedules in exact mode, its matching (p2p::Matching) in matching mode
// any. A rank may send to itself.
#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "core/api/checks.hpp"
#include "core/comm/communicator.hpp"
#include "core/comm/stream_order.hpp"
#include "core/device/staging.hpp"

namespace hcomm::api {
namespace {

constexpr hcomm_status_t kNoStatus{.source = HCOMM_ANY_SOURCE, .tag = HCOMM_ANY_TAG, .bytes = 0, .cancelled = 0};

// A call that only matching mode any serves fails in exact mode, saying which setting to use.
void require_matching(const char* fn, const comm::Communicator& c, const char* what) {
  HCOMM_ARG_CHECK(c.config().p2p_matching_any,
                  "%s: %s needs point to point in matching mode any, and this communicator's is exact: create it with "
                  "HCOMM_P2P_MATCHING=any, or with hcomm_config_t.p2p_matching = HCOMM_P2P_MATCHING_ANY",
                  fn, what);
}

// The peer and tag of a call; a receive's or a probe's may be wildcards.
void check_peer_and_tag(const char* fn, const comm::Communicator& c, int peer, int tag, bool wildcards) {
  if (wildcards && peer == HCOMM_ANY_SOURCE)
    require_matching(fn, c, "peer -1 (HCOMM_ANY_SOURCE)");
  else
    check_rank(fn, "peer", peer, c);
  if (wildcards && tag == HCOMM_ANY_TAG)
    require_matching(fn, c, "tag -1 (HCOMM_ANY_TAG)");
  else
    HCOMM_ARG_CHECK(tag >= 0, "%s: tag %d is outside 0..HCOMM_TAG_MAX (%d)%s", fn, tag, HCOMM_TAG_MAX,
                    wildcards ? " and is not HCOMM_ANY_TAG" : "");
}

enum class Kind { kSend, kSynchronousSend, kReceive };

// A send or receive queued on the communicator's StreamOrder (a stream's,
// or a nonblocking one on a device buffer), in exact mode: a device buffer
// goes through the call's staging memory.
hcomm_result_t stream_ordered(const char* fn, comm::Communicator& c, bool sending, void* buf, size_t count,
                              hcomm_dtype_t dtype, int peer, int tag, const Completion& how,
                              const DeviceBuffers& on_device) {
  if (c.config().p2p_matching_any)
    HCOMM_THROW(HCOMM_ERR_UNSUPPORTED,
                "%s: this communicator matches point to point as MPI does (HCOMM_P2P_MATCHING=any), which "
                "stream-ordered calls (those given a stream, and nonblocking ones on device buffers) do not take: use "
                "a NULL stream and the blocking form, or a communicator in exact mode",
                fn);
  const size_t bytes = count * dtype_size(dtype);
  device::Staging staging;
  std::optional<size_t> at;
  if (bytes && on_device.accelerator) {
    at = staging.add(bytes);
    (sending ? staging.in : staging.out).push_back({static_cast<uint8_t*>(buf), *at, bytes});
  }
  // A point-to-point call's args name the peer as root.
  const hcomm_coll_args_t args = make_args(HCOMM_COLL_SENDRECV, count, dtype, HCOMM_SUM, peer);
  comm::StreamOrder& order = c.stream_order(stream_accelerator(fn));
  std::shared_ptr<comm::StreamOrder::Ticket> ticket;
  if (how.request) {
    ticket = std::make_shared<comm::StreamOrder::Ticket>();
    if (!sending) ticket->status = {.source = peer, .tag = tag, .bytes = bytes, .cancelled = 0};
  }
  std::vector<comm::StreamOrder::Piece> call(1);
  call[0].staging = std::move(staging);
  call[0].start = [=](comm::Communicator& comm, uint8_t* area) {
    void* b = at ? area + *at : buf;
    return sending ? comm.send(args, b, tag) : comm.recv(args, b, tag);
  };
  order.enqueue(how.stream, std::move(call), ticket);
  return complete(order, ticket, c, how);
}

// A send, or a receive into buf of a (peer, tag) or, where `matched`, of the
// message a matched probe took (*taken, which it consumes; comm is then the
// message's). Device memory goes through a host staging buffer: copied there
// before a send, from there after a receive (the bytes that came).
hcomm_result_t p2p(const char* fn, Kind kind, void* buf, size_t count, hcomm_dtype_t dtype, int peer, int tag,
                   hcomm_comm_t comm, const Completion& how, hcomm_status_t* status = nullptr, bool matched = false,
                   hcomm_message_t* taken = nullptr) {
  return c_boundary([&] {
    if (status) *status = kNoStatus;
    check_completion(fn, how);
    const bool sending = kind != Kind::kReceive;
    HCOMM_ARG_CHECK(!matched || taken, "%s: message is NULL", fn);
    HCOMM_ARG_CHECK(!matched || *taken,
                    "%s: *message is NULL: take a message with hcomm_mprobe or hcomm_improbe (one that found none "
                    "gives NULL)",
                    fn);
    comm::Communicator& c = matched ? *(*taken)->comm : checked_comm(fn, comm);
    check_dtype(fn, dtype);
    const size_t bytes = checked_bytes(fn, count, dtype);
    HCOMM_ARG_CHECK(buf || bytes == 0, "%s: buf is NULL but count is not 0", fn);
    if (!matched) check_peer_and_tag(fn, c, peer, tag, !sending);
    if (kind == Kind::kSynchronousSend) require_matching(fn, c, "a synchronous send");
    const DeviceBuffers on_device = bytes || how.stream ? device_buffers(fn, how, {buf}) : DeviceBuffers{};
    if (!matched && queued(how, on_device))
      return stream_ordered(fn, c, sending, buf, count, dtype, peer, tag, how, on_device);
    if (on_device.accelerator && how.nonblocking)
      HCOMM_THROW(HCOMM_ERR_UNSUPPORTED,
                  "%s: buf is %s device memory, which a nonblocking receive of a matched message does not take: use "
                  "hcomm_mrecv",
                  fn, on_device.accelerator->name());
    const auto turn = c.host_turn();
    const device::Accelerator* accelerator = on_device.accelerator;
    void* b = accelerator ? accelerator->staging(bytes, 0) : buf;
    if (accelerator && sending) accelerator->copy(b, buf, bytes);
    hcomm_status_t got = kNoStatus;
    // A blocking receive's data comes back from staging also when it failed alone (truncated).
    auto unstage = [&] {
      if (accelerator && !sending && !how.nonblocking) accelerator->copy(buf, b, std::min(got.bytes, bytes));
      if (status) *status = got;
    };
    try {
      if (c.config().p2p_matching_any) {
        p2p::Message* m = nullptr;
        if (matched) {
          const std::unique_ptr<hcomm_message> message(std::exchange(*taken, nullptr));
          m = c.recv_matching(b, bytes, message->arrival);
        } else {
          m = sending ? c.send_matching(b, bytes, peer, tag, kind == Kind::kSynchronousSend)
                      : c.recv_matching(b, bytes, peer, tag);
        }
        complete(c, m, how, &got);
      } else {
        // A point-to-point call's args name the peer as root.
        const hcomm_coll_args_t args = make_args(HCOMM_COLL_SENDRECV, count, dtype, HCOMM_SUM, peer);
        complete(c, sending ? c.send(args, b, tag) : c.recv(args, b, tag), how, &got);
      }
    } catch (const Error& e) {
      if (e.code() == HCOMM_ERR_TRUNCATED) unstage();
      throw;
    }
    unstage();
    return HCOMM_SUCCESS;
  });
}

// hcomm_iprobe (flag), hcomm_probe, and, where `matched`, their matched
// forms (message).
hcomm_result_t probe(const char* fn, int peer, int tag, hcomm_comm_t comm, bool blocking, int* flag, bool matched,
                     hcomm_message_t* message, hcomm_status_t* status) {
  return c_boundary([&] {
    if (status) *status = kNoStatus;
    HCOMM_ARG_CHECK(blocking || flag, "%s: flag is NULL", fn);
    HCOMM_ARG_CHECK(!matched || message, "%s: message is NULL", fn);
    if (flag) *flag = 0;
    if (message) *message = nullptr;
    comm::Communicator& c = checked_comm(fn, comm);
    const auto turn = c.host_turn();
    require_matching(fn, c, "a probe");
    check_peer_and_tag(fn, c, peer, tag, true);
    p2p::Arrival* taken = nullptr;
    // The handle first: once the message is taken, nothing may fail.
    std::unique_ptr<hcomm_message> handle(message ? new hcomm_message{&c, nullptr} : nullptr);
    const bool found = c.probe(peer, tag, blocking, status, message ? &taken : nullptr);
    if (flag) *flag = found ? 1 : 0;
    if (found && message) {
      handle->arrival = taken;
      *message = handle.release();
    }
    return HCOMM_SUCCESS;
  });
}

}  // namespace
}  // namespace hcomm::api

using hcomm::api::blocking;
using hcomm::api::Kind;
using hcomm::api::nonblocking;
using hcomm::api::p2p;
using hcomm::api::probe;

extern "C" {

HCOMM_API hcomm_result_t hcomm_send(const void* buf, size_t count, hcomm_dtype_t dtype, int peer, int tag,
                                    hcomm_comm_t comm, hcomm_stream_t stream) {
  return p2p("hcomm_send", Kind::kSend, const_cast<void*>(buf), count, dtype, peer, tag, comm, blocking(stream));
}

HCOMM_API hcomm_result_t hcomm_isend(const void* buf, size_t count, hcomm_dtype_t dtype, int peer, int tag,
                                     hcomm_comm_t comm, hcomm_request_t* request) {
  return p2p("hcomm_isend", Kind::kSend, const_cast<void*>(buf), count, dtype, peer, tag, comm, nonblocking(request));
}

HCOMM_API hcomm_result_t hcomm_ssend(const void* buf, size_t count, hcomm_dtype_t dtype, int peer, int tag,
                                     hcomm_comm_t comm, hcomm_stream_t stream) {
  return p2p("hcomm_ssend", Kind::kSynchronousSend, const_cast<void*>(buf), count, dtype, peer, tag, comm,
             blocking(stream));
}

HCOMM_API hcomm_result_t hcomm_issend(const void* buf, size_t count, hcomm_dtype_t dtype, int peer, int tag,
                                      hcomm_comm_t comm, hcomm_request_t* request) {
  return p2p("hcomm_issend", Kind::kSynchronousSend, const_cast<void*>(buf), count, dtype, peer, tag, comm,
             nonblocking(request));
}

HCOMM_API hcomm_result_t hcomm_recv(void* buf, size_t count, hcomm_dtype_t dtype, int peer, int tag,
                                    hcomm_comm_t comm, hcomm_stream_t stream) {
  return p2p("hcomm_recv", Kind::kReceive, buf, count, dtype, peer, tag, comm, blocking(stream));
}

HCOMM_API hcomm_result_t hcomm_recv_status(void* buf, size_t count, hcomm_dtype_t dtype, int peer, int tag,
                                           hcomm_comm_t comm, hcomm_stream_t stream, hcomm_status_t* status) {
  return p2p("hcomm_recv_status", Kind::kReceive, buf, count, dtype, peer, tag, comm, blocking(stream), status);
}

HCOMM_API hcomm_result_t hcomm_irecv(void* buf, size_t count, hcomm_dtype_t dtype, int peer, int tag,
                                     hcomm_comm_t comm, hcomm_request_t* request) {
  return p2p("hcomm_irecv", Kind::kReceive, buf, count, dtype, peer, tag, comm, nonblocking(request));
}

HCOMM_API hcomm_result_t hcomm_iprobe(int peer, int tag, hcomm_comm_t comm, int* flag, hcomm_status_t* status) {
  return probe("hcomm_iprobe", peer, tag, comm, false, flag, false, nullptr, status);
}

HCOMM_API hcomm_result_t hcomm_probe(int peer, int tag, hcomm_comm_t comm, hcomm_status_t* status) {
  return probe("hcomm_probe", peer, tag, comm, true, nullptr, false, nullptr, status);
}

HCOMM_API hcomm_result_t hcomm_improbe(int peer, int tag, hcomm_comm_t comm, int* flag, hcomm_message_t* message,
                                       hcomm_status_t* status) {
  return probe("hcomm_improbe", peer, tag, comm, false, flag, true, message, status);
}

HCOMM_API hcomm_result_t hcomm_mprobe(int peer, int tag, hcomm_comm_t comm, hcomm_message_t* message,
                                      hcomm_status_t* status) {
  return probe("hcomm_mprobe", peer, tag, comm, true, nullptr, true, message, status);
}

HCOMM_API hcomm_result_t hcomm_mrecv(void* buf, size_t count, hcomm_dtype_t dtype, hcomm_message_t* message,
                                     hcomm_status_t* status) {
  return p2p("hcomm_mrecv", Kind::kReceive, buf, count, dtype, 0, 0, nullptr, blocking(nullptr), status, true, message);
}

HCOMM_API hcomm_result_t hcomm_imrecv(void* buf, size_t count, hcomm_dtype_t dtype, hcomm_message_t* message,
                                      hcomm_request_t* request) {
  return p2p("hcomm_imrecv", Kind::kReceive, buf, count, dtype, 0, 0, nullptr, nonblocking(request), nullptr, true,
             message);
}

}  // extern "C"
