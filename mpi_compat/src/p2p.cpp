// Point to point over HComm's tagged send and receive.
//
// An MPI message is an envelope (requests.hpp) and, when it does not fit in
// the envelope, a second HComm message with the data. HComm's tag carries
// the MPI tag and which of the two it is (and a third kind, the receiver's
// acknowledgement of a synchronous send). HComm keeps messages of one tag
// between two ranks in order; receives of one (communicator, source, tag)
// take their envelopes in the order they were posted, and post their data
// receives in that order too (progress()), so MPI's non-overtaking rule holds.
// A receive can be cancelled until its envelope has come: the HComm receive
// posted for that envelope then serves the next receive of its channel.
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <tuple>
#include <utility>

#include "mpi_compat/src/datatypes.hpp"
#include "mpi_compat/src/requests.hpp"

namespace hcomm::mpi {
namespace {

// An HComm receive of an envelope, posted ahead. A channel's slots pair
// with its waiting receives in order (receives[i] takes slots[i]); a
// cancelled receive leaves its slot to the next receive of the channel,
// which is the one MPI's order gives the message to.
struct Slot {
  Envelope envelope;
  hcomm_request_t request = nullptr;  // null once the envelope is here
};
struct Channel {
  std::deque<Slot> slots;  // in the order posted to HComm (a deque keeps their addresses)
  std::deque<Request*> receives;
};
using ChannelKey = std::tuple<MPI_Comm, int, int>;  // communicator, source, tag
std::map<ChannelKey, Channel> channels;
int awaiting = 0;  // receives waiting for their envelope

void check_tag(int tag, bool receive) {
  if (receive && tag == MPI_ANY_TAG)
    fail(MPI_ERR_UNSUPPORTED_OPERATION,
         "tag MPI_ANY_TAG: wildcard receives are not implemented yet (HComm's "
         "receives name their tag)");
  if (tag < 0 || tag > kTagUb) fail(MPI_ERR_TAG, "tag %d is outside 0..MPI_TAG_UB (%d)", tag, kTagUb);
}

void check_peer(int peer, const Comm& c, const char* argument, bool receive) {
  if (peer == MPI_PROC_NULL) return;
  if (receive && peer == MPI_ANY_SOURCE)
    fail(MPI_ERR_UNSUPPORTED_OPERATION,
         "%s MPI_ANY_SOURCE: wildcard receives are not implemented yet (HComm's "
         "receives name their source)",
         argument);
  if (peer < 0 || peer >= c.size)
    fail(MPI_ERR_RANK, "%s %d is not a rank of the communicator (ranks 0..%d)", argument, peer, c.size - 1);
}

size_t check_recv(const Comm& c, const void* buf, int count, MPI_Datatype type, int source, int tag) {
  const size_t bytes = bytes_of(count, type);
  check_data(buf, bytes, type, "buf");
  check_peer(source, c, "source", true);
  check_tag(tag, true);
  return bytes;
}

}  // namespace

size_t check_send(const Comm& c, const void* buf, int count, MPI_Datatype type, int dest, int tag) {
  const size_t bytes = bytes_of(count, type);
  check_data(buf, bytes, type, "buf");
  check_peer(dest, c, "dest", false);
  check_tag(tag, false);
  return bytes;
}

void start_send(Request& r, const Comm& c, const void* buf, int count, MPI_Datatype type, int dest, int tag,
                bool synchronous) {
  const size_t bytes = check_send(c, buf, count, type, dest, tag);
  if (dest == MPI_PROC_NULL) return;
  if (!is_dense(type)) {
    r.packed_in.resize(bytes);
    pack(buf, 0, static_cast<size_t>(count), *layout_of(type), r.packed_in.data());
    buf = r.packed_in.data();
  }
  r.peer = dest;
  r.tag = tag;
  r.envelope.bytes = bytes;
  r.envelope.flags = synchronous ? kSynchronous : 0;
  if (bytes <= kInlineBytes && bytes) std::memcpy(r.envelope.data, buf, bytes);
  issue(r.hcomm, "hcomm_isend (an MPI envelope)", [&](hcomm_request_t* h) {
    return hcomm_isend(&r.envelope, sizeof r.envelope, HCOMM_UINT8, dest, hcomm_tag(tag, kEnvelope), c.h, h);
  });
  if (bytes > kInlineBytes)
    issue(r.hcomm, "hcomm_isend (MPI data)", [&](hcomm_request_t* h) {
      return hcomm_isend(buf, bytes, HCOMM_UINT8, dest, hcomm_tag(tag, kData), c.h, h);
    });
  if (synchronous)
    issue(r.hcomm, "hcomm_irecv (a synchronous send's acknowledgement)",
          [&](hcomm_request_t* h) { return hcomm_irecv(&r.ack, 1, HCOMM_UINT8, dest, hcomm_tag(tag, kAck), c.h, h); });
}

namespace {

void start_recv(Request& r, MPI_Comm comm, const Comm& c, void* buf, int count, MPI_Datatype type, int source,
                int tag) {
  r.capacity = check_recv(c, buf, count, type, source, tag);
  r.receive = true;
  r.buf = buf;
  r.peer = source;
  r.tag = tag;
  if (source == MPI_PROC_NULL) {
    r.status.MPI_SOURCE = MPI_PROC_NULL;
    r.status.MPI_TAG = MPI_ANY_TAG;
    return;
  }
  if (!is_dense(type)) {
    // Received packed, unpacked as far as the message goes.
    r.packed_out.resize(r.capacity);
    r.buf = r.packed_out.data();
    r.unpack = [&r, buf, count, l = layout_of(type)] {
      unpack(r.packed_out.data(), 0, static_cast<size_t>(count), static_cast<size_t>(count_of(r.status)), *l, buf);
    };
  }
  Channel& channel = channels[{comm, source, tag}];
  if (channel.slots.size() == channel.receives.size()) {
    Slot& slot = channel.slots.emplace_back();
    const hcomm_result_t rc = hcomm_irecv(&slot.envelope, sizeof slot.envelope, HCOMM_UINT8, source,
                                          hcomm_tag(tag, kEnvelope), c.h, &slot.request);
    if (rc != HCOMM_SUCCESS) channel.slots.pop_back();
    check(rc, "hcomm_irecv (an MPI envelope)");
  }
  channel.receives.push_back(&r);
  r.awaiting_envelope = true;
  ++awaiting;
}

// A receive's envelope arrived: copy a small message, post the data's
// receive for a larger one, acknowledge a synchronous send.
void take_envelope(Request& r, const Envelope& envelope) {
  const Comm& c = comm_of(r.comm);
  const size_t bytes = envelope.bytes, kept = std::min<size_t>(bytes, r.capacity);
  r.awaiting_envelope = false;
  --awaiting;
  r.status.MPI_SOURCE = r.peer;
  r.status.MPI_TAG = r.tag;
  set_count(r.status, static_cast<MPI_Count>(kept));
  if (bytes > r.capacity) {
    r.error_class = MPI_ERR_TRUNCATE;
    char text[200];
    std::snprintf(text, sizeof text, "the message from rank %d with tag %d has %zu bytes, the receive room for %zu",
                  r.peer, r.tag, bytes, r.capacity);
    r.error_text = text;
  }
  if (bytes <= kInlineBytes) {
    if (kept) std::memcpy(r.buf, envelope.data, kept);
  } else {
    void* into = r.buf;
    if (bytes > r.capacity) {
      r.overflow.resize(bytes);
      into = r.overflow.data();
      r.then = [&r, kept] {
        if (kept) std::memcpy(r.buf, r.overflow.data(), kept);
      };
    }
    issue(r.hcomm, "hcomm_irecv (MPI data)", [&](hcomm_request_t* h) {
      return hcomm_irecv(into, bytes, HCOMM_UINT8, r.peer, hcomm_tag(r.tag, kData), c.h, h);
    });
  }
  if (envelope.flags & kSynchronous)
    issue(r.hcomm, "hcomm_isend (a synchronous send's acknowledgement)", [&](hcomm_request_t* h) {
      return hcomm_isend(&r.ack, 1, HCOMM_UINT8, r.peer, hcomm_tag(r.tag, kAck), c.h, h);
    });
}

// A receive that waits for its envelope stops waiting: its slot stays for
// the next receive of its channel.
void withdraw(Request& r) {
  std::deque<Request*>& receives = channels[{r.comm, r.peer, r.tag}].receives;
  receives.erase(std::find(receives.begin(), receives.end(), &r));
  r.awaiting_envelope = false;
  --awaiting;
}

template <class Start>
int point_to_point(const char* fn, MPI_Comm comm, bool nonblocking, MPI_Request* request, MPI_Status* status,
                   Start start) {
  return call(fn, comm, [&] {
    const Comm& c = comm_of(comm);
    if (nonblocking && !request) fail(MPI_ERR_ARG, "request is NULL");
    auto r = std::make_unique<Request>();
    r->comm = comm;
    start(*r, c);
    if (nonblocking)
      *request = add_request(std::move(r));
    else
      wait_request(*r, status, fn);
  });
}

}  // namespace

bool test_hcomm(hcomm_request_t& request, const char* fn) {
  if (!request) return true;
  int done = 0;
  const hcomm_result_t rc = hcomm_test(request, &done);
  if (rc != HCOMM_SUCCESS || done) request = nullptr;  // freed by HComm
  check(rc, fn);
  return done;
}

bool pending_envelopes() { return awaiting > 0; }

bool progress() {
  bool moved = false;
  for (auto it = channels.begin(); it != channels.end();) {
    Channel& channel = it->second;
    while (!channel.receives.empty() && test_hcomm(channel.slots.front().request, "an MPI receive")) {
      Request& r = *channel.receives.front();
      channel.receives.pop_front();
      try {
        take_envelope(r, channel.slots.front().envelope);
      } catch (...) {
        channel.slots.pop_front();
        throw;
      }
      channel.slots.pop_front();
      moved = true;
    }
    it = channel.slots.empty() ? channels.erase(it) : std::next(it);
  }
  return complete_freed("a freed MPI request", false) || moved;
}

bool cancel_receive(Request& r) {
  progress();
  if (!r.awaiting_envelope) return false;
  withdraw(r);
  set_cancelled(r.status, true);
  return true;
}

bool is_done(Request& r, const char* fn) {
  if (r.awaiting_envelope) return false;
  bool done = true;
  for (hcomm_request_t& h : r.hcomm) done = test_hcomm(h, fn) && done;
  return done;
}

void poll_until(const char* fn, const std::function<bool()>& done) {
  using Clock = std::chrono::steady_clock;
  const auto patience = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(state().timeout_s));
  auto deadline = Clock::now() + patience;
  for (unsigned round = 1;; ++round) {
    const bool moved = progress();
    if (done()) return;
    if (moved) {
      deadline = Clock::now() + patience;
    } else {
      sched_yield();
      if (round % 1024 == 0 && Clock::now() > deadline)
        fail(MPI_ERR_OTHER, "%s: no message moved for %g s (HCOMM_TIMEOUT); a peer is missing its side", fn,
             state().timeout_s);
    }
  }
}

void wait_hcomm(hcomm_request_t& request, const char* fn) {
  if (!request) return;
  if (awaiting == 0) {
    hcomm_request_t h = std::exchange(request, nullptr);
    check(hcomm_wait(h), fn);
    return;
  }
  // Other receives wait for their envelopes: poll, so that their data
  // receives are posted as their envelopes come.
  poll_until(fn, [&] { return test_hcomm(request, fn); });
}

void wait_request(Request& r, MPI_Status* status, const char* fn) {
  try {
    while (r.awaiting_envelope) {
      if (progress()) continue;
      if (awaiting > 1) {
        // Other receives wait for envelopes too: poll, so that each is taken as it comes.
        poll_until(fn, [&] { return !r.awaiting_envelope; });
        continue;
      }
      // r's envelope comes into the front slot of its channel, which progress() then takes.
      std::deque<Slot>& slots = channels[{r.comm, r.peer, r.tag}].slots;
      const hcomm_result_t rc = hcomm_wait(std::exchange(slots.front().request, nullptr));
      if (rc != HCOMM_SUCCESS) slots.pop_front();  // it will hold no envelope
      check(rc, fn);
    }
    for (hcomm_request_t& h : r.hcomm) wait_hcomm(h, fn);
  } catch (Error& e) {
    // The request ends here: no envelope may come into it later.
    if (r.awaiting_envelope) withdraw(r);
    // HComm's text speaks of its own messages: say which MPI message they carry.
    if (r.peer != MPI_PROC_NULL)
      e.text += " [the MPI message " + std::string(r.receive ? "from" : "to") + " rank " + std::to_string(r.peer) +
                " with tag " + std::to_string(r.tag) + ", carried by HComm tags " +
                std::to_string(hcomm_tag(r.tag, kEnvelope)) + ".." + std::to_string(hcomm_tag(r.tag, kAck)) + "]";
    throw;
  }
  complete(r);
  report(r, status);
}

}  // namespace hcomm::mpi

using namespace hcomm::mpi;

HCOMM_MPI_API int PMPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return point_to_point("MPI_Send", comm, false, nullptr, MPI_STATUS_IGNORE,
                        [&](Request& r, const Comm& c) { start_send(r, c, buf, count, datatype, dest, tag, false); });
}
HCOMM_MPI_ALIAS(Send)

HCOMM_MPI_API int PMPI_Rsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return point_to_point("MPI_Rsend", comm, false, nullptr, MPI_STATUS_IGNORE,
                        [&](Request& r, const Comm& c) { start_send(r, c, buf, count, datatype, dest, tag, false); });
}
HCOMM_MPI_ALIAS(Rsend)

HCOMM_MPI_API int PMPI_Ssend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return point_to_point("MPI_Ssend", comm, false, nullptr, MPI_STATUS_IGNORE,
                        [&](Request& r, const Comm& c) { start_send(r, c, buf, count, datatype, dest, tag, true); });
}
HCOMM_MPI_ALIAS(Ssend)

HCOMM_MPI_API int PMPI_Isend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                             MPI_Request* request) {
  return point_to_point("MPI_Isend", comm, true, request, MPI_STATUS_IGNORE,
                        [&](Request& r, const Comm& c) { start_send(r, c, buf, count, datatype, dest, tag, false); });
}
HCOMM_MPI_ALIAS(Isend)

HCOMM_MPI_API int PMPI_Irsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                              MPI_Request* request) {
  return point_to_point("MPI_Irsend", comm, true, request, MPI_STATUS_IGNORE,
                        [&](Request& r, const Comm& c) { start_send(r, c, buf, count, datatype, dest, tag, false); });
}
HCOMM_MPI_ALIAS(Irsend)

HCOMM_MPI_API int PMPI_Issend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                              MPI_Request* request) {
  return point_to_point("MPI_Issend", comm, true, request, MPI_STATUS_IGNORE,
                        [&](Request& r, const Comm& c) { start_send(r, c, buf, count, datatype, dest, tag, true); });
}
HCOMM_MPI_ALIAS(Issend)

HCOMM_MPI_API int PMPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                            MPI_Status* status) {
  return point_to_point("MPI_Recv", comm, false, nullptr, status,
                        [&](Request& r, const Comm& c) { start_recv(r, comm, c, buf, count, datatype, source, tag); });
}
HCOMM_MPI_ALIAS(Recv)

HCOMM_MPI_API int PMPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                             MPI_Request* request) {
  return point_to_point("MPI_Irecv", comm, true, request, MPI_STATUS_IGNORE,
                        [&](Request& r, const Comm& c) { start_recv(r, comm, c, buf, count, datatype, source, tag); });
}
HCOMM_MPI_ALIAS(Irecv)

HCOMM_MPI_API int PMPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                                void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                                MPI_Comm comm, MPI_Status* status) {
  return call("MPI_Sendrecv", comm, [&] {
    const Comm& c = comm_of(comm);
    check_send(c, sendbuf, sendcount, sendtype, dest, sendtag);
    check_recv(c, recvbuf, recvcount, recvtype, source, recvtag);
    Request send, recv;
    send.comm = recv.comm = comm;
    start_recv(recv, comm, c, recvbuf, recvcount, recvtype, source, recvtag);
    start_send(send, c, sendbuf, sendcount, sendtype, dest, sendtag, false);
    wait_request(recv, status, "MPI_Sendrecv");
    wait_request(send, MPI_STATUS_IGNORE, "MPI_Sendrecv");
  });
}
HCOMM_MPI_ALIAS(Sendrecv)

HCOMM_MPI_API int PMPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
                                        int recvtag, MPI_Comm comm, MPI_Status* status) {
  return call("MPI_Sendrecv_replace", comm, [&] {
    const Comm& c = comm_of(comm);
    const size_t bytes = check_send(c, buf, count, datatype, dest, sendtag);
    check_recv(c, buf, count, datatype, source, recvtag);
    // The message leaves from a copy (start_send packs one of a type that
    // is not dense): the receive overwrites buf.
    std::vector<unsigned char> copy;
    const void* from = buf;
    if (is_dense(datatype) && buf) {
      copy.assign(static_cast<const unsigned char*>(buf), static_cast<const unsigned char*>(buf) + bytes);
      from = copy.data();
    }
    Request send, recv;
    send.comm = recv.comm = comm;
    start_send(send, c, from, count, datatype, dest, sendtag, false);
    start_recv(recv, comm, c, buf, count, datatype, source, recvtag);
    wait_request(recv, status, "MPI_Sendrecv_replace");
    wait_request(send, MPI_STATUS_IGNORE, "MPI_Sendrecv_replace");
  });
}
HCOMM_MPI_ALIAS(Sendrecv_replace)
