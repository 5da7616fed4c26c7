// Point to point on HComm's matching mode any (every MPI communicator is in
// it: hcomm_config_t.p2p_matching, set on the world and MPI_COMM_SELF and
// inherited by the rest): HComm matches as MPI does (wildcards, the
// non-overtaking rule, receives with room to spare, statuses), probes,
// synchronous sends and cancels, so an MPI call is one HComm call on the
// message's packed bytes. Persistent requests keep their arguments and start
// a send or receive at each MPI_Start.
#include <map>
#include <utility>

#include "mpi_compat/src/datatypes.hpp"
#include "mpi_compat/src/requests.hpp"

namespace hcomm::mpi {
namespace {

void check_tag(int tag, bool receive) {
  if (receive && tag == MPI_ANY_TAG) return;
  if (tag < 0 || tag > kTagUb) fail(MPI_ERR_TAG, "tag %d is outside 0..MPI_TAG_UB (%d)", tag, kTagUb);
}

void check_peer(int peer, const Comm& c, const char* argument, bool receive) {
  if (peer == MPI_PROC_NULL || (receive && peer == MPI_ANY_SOURCE)) return;
  if (peer < 0 || peer >= c.size)
    fail(MPI_ERR_RANK, "%s %d is not a rank of the communicator (ranks 0..%d)", argument, peer, c.size - 1);
}

// MPI's wildcards as HComm's.
int hcomm_source(int source) { return source == MPI_ANY_SOURCE ? HCOMM_ANY_SOURCE : source; }
int hcomm_tag(int tag) { return tag == MPI_ANY_TAG ? HCOMM_ANY_TAG : tag; }

size_t check_recv(const Comm& c, const void* buf, int count, MPI_Datatype type, int source, int tag) {
  const size_t bytes = bytes_of(count, type);
  check_data(buf, bytes, type, "buf");
  check_peer(source, c, "source", true);
  check_tag(tag, true);
  return bytes;
}

// A receive of count elements of type into buf: where the elements do not
// lie packed, into a packed copy, unpacked as far as the message goes. The
// receive itself is post(r, into) (hcomm_irecv or hcomm_imrecv).
template <class Post>
void start_receive(Request& r, void* buf, int count, MPI_Datatype type, size_t bytes, Post post) {
  r.receive = true;
  r.room = bytes;
  void* into = buf;
  if (!is_dense(type)) {
    r.packed_out.resize(bytes);
    into = r.packed_out.data();
    r.unpack = [&r, buf, count, l = layout_of(type)] {
      unpack(r.packed_out.data(), 0, static_cast<size_t>(count), static_cast<size_t>(count_of(r.status)), *l, buf);
    };
  }
  post(into);
}

// The status of a receive from MPI_PROC_NULL.
void proc_null_status(MPI_Status& s) {
  s.MPI_SOURCE = MPI_PROC_NULL;
  s.MPI_TAG = MPI_ANY_TAG;
  set_count(s, 0);
}

void start_recv(Request& r, const Comm& c, void* buf, int count, MPI_Datatype type, int source, int tag) {
  const size_t bytes = check_recv(c, buf, count, type, source, tag);
  r.peer = source;
  r.tag = tag;
  if (source == MPI_PROC_NULL) return proc_null_status(r.status);
  start_receive(r, buf, count, type, bytes, [&](void* into) {
    issue(r.hcomm, "hcomm_irecv", [&](hcomm_request_t* h) {
      return hcomm_irecv(into, bytes, HCOMM_UINT8, hcomm_source(source), hcomm_tag(tag), c.h, h);
    });
  });
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

// Matched probes' messages (MPI_Mprobe, MPI_Improbe), by handle.
struct Matched {
  hcomm_message_t message;
  MPI_Comm comm;
};
std::map<MPI_Message, Matched> matched;
unsigned next_message = 0;

// A probe of (source, tag): MPI_PROC_NULL finds its empty message at once.
// `blocking` waits for one, polling where requests of other communicators
// are under way. With `message`, the message is taken (a matched probe).
int probe(const char* fn, int source, int tag, MPI_Comm comm, bool blocking, int* flag, bool matched_probe,
          MPI_Message* message, MPI_Status* status) {
  return call(fn, comm, [&] {
    const Comm& c = comm_of(comm);
    if (!blocking) check_out(flag, "flag");
    if (matched_probe) check_out(message, "message");
    check_peer(source, c, "source", true);
    check_tag(tag, true);
    if (flag) *flag = 0;
    if (source == MPI_PROC_NULL) {
      if (flag) *flag = 1;
      if (message) *message = MPI_MESSAGE_NO_PROC;
      if (status != MPI_STATUS_IGNORE) {
        empty_status(status);
        proc_null_status(*status);
      }
      return;
    }
    hcomm_status_t got{};
    hcomm_message_t taken = nullptr;
    int found = 0;
    auto look = [&] {
      check(message ? hcomm_improbe(hcomm_source(source), hcomm_tag(tag), c.h, &found, &taken, &got)
                    : hcomm_iprobe(hcomm_source(source), hcomm_tag(tag), c.h, &found, &got),
            fn);
      return found != 0;
    };
    if (blocking && !others_pending(comm)) {
      check(message ? hcomm_mprobe(hcomm_source(source), hcomm_tag(tag), c.h, &taken, &got)
                    : hcomm_probe(hcomm_source(source), hcomm_tag(tag), c.h, &got),
            fn);
      found = 1;
    } else if (blocking) {
      poll_until(fn, look);
    } else {
      progress();  // a loop of MPI_Iprobe moves the other communicators' messages too
      look();
    }
    if (flag) *flag = found;
    if (message) *message = MPI_MESSAGE_NULL;
    if (!found) return;
    if (message) {
      *message = static_cast<MPI_Message>(0xac800000u + (next_message++ & 0x3fffffu));
      matched[*message] = Matched{taken, comm};
    }
    if (status != MPI_STATUS_IGNORE) {
      empty_status(status);
      status_from(*status, got, got.bytes);
    }
  });
}

// The receive of a matched probe's message (MPI_Mrecv, MPI_Imrecv).
int matched_receive(const char* fn, void* buf, int count, MPI_Datatype type, MPI_Message* message, bool nonblocking,
                    MPI_Request* request, MPI_Status* status) {
  MPI_Comm comm = MPI_COMM_WORLD;
  if (message) {
    auto it = matched.find(*message);
    if (it != matched.end()) comm = it->second.comm;
  }
  return call(fn, comm, [&] {
    require_initialized(fn);
    check_out(message, "message");
    if (nonblocking) check_out(request, "request");
    auto r = std::make_unique<Request>();
    r->comm = comm;
    const size_t bytes = bytes_of(count, type);
    check_data(buf, bytes, type, "buf");
    if (*message == MPI_MESSAGE_NO_PROC) {
      proc_null_status(r->status);
    } else {
      auto it = matched.find(*message);
      if (it == matched.end())
        fail(MPI_ERR_REQUEST, "message 0x%x is no message of a matched probe (MPI_Mprobe, MPI_Improbe)",
             static_cast<unsigned>(*message));
      hcomm_message_t taken = it->second.message;
      matched.erase(it);
      start_receive(*r, buf, count, type, bytes, [&](void* into) {
        issue(r->hcomm, "hcomm_imrecv",
              [&](hcomm_request_t* h) { return hcomm_imrecv(into, bytes, HCOMM_UINT8, &taken, h); });
      });
    }
    *message = MPI_MESSAGE_NULL;
    if (nonblocking)
      *request = add_request(std::move(r));
    else
      wait_request(*r, status, fn);
  });
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
  r.peer = dest;
  r.tag = tag;
  if (dest == MPI_PROC_NULL) return;
  if (!is_dense(type)) {
    r.packed_in.resize(bytes);
    pack(buf, 0, static_cast<size_t>(count), *layout_of(type), r.packed_in.data());
    buf = r.packed_in.data();
  }
  issue(r.hcomm, synchronous ? "hcomm_issend" : "hcomm_isend", [&](hcomm_request_t* h) {
    return synchronous ? hcomm_issend(buf, bytes, HCOMM_UINT8, dest, tag, c.h, h)
                       : hcomm_isend(buf, bytes, HCOMM_UINT8, dest, tag, c.h, h);
  });
}

namespace {

// MPI_Send_init, MPI_Rsend_init and MPI_Ssend_init (`synchronous`).
int send_init(const char* fn, const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request* request, bool synchronous) {
  return persistent(
      fn, comm, request, [=](const Comm& c) { check_send(c, buf, count, type, dest, tag); },
      [=](Request& r, const Comm& c) { start_send(r, c, buf, count, type, dest, tag, synchronous); });
}

}  // namespace
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
                        [&](Request& r, const Comm& c) { start_recv(r, c, buf, count, datatype, source, tag); });
}
HCOMM_MPI_ALIAS(Recv)

HCOMM_MPI_API int PMPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                             MPI_Request* request) {
  return point_to_point("MPI_Irecv", comm, true, request, MPI_STATUS_IGNORE,
                        [&](Request& r, const Comm& c) { start_recv(r, c, buf, count, datatype, source, tag); });
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
    start_recv(recv, c, recvbuf, recvcount, recvtype, source, recvtag);
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
    start_recv(recv, c, buf, count, datatype, source, recvtag);
    wait_request(recv, status, "MPI_Sendrecv_replace");
    wait_request(send, MPI_STATUS_IGNORE, "MPI_Sendrecv_replace");
  });
}
HCOMM_MPI_ALIAS(Sendrecv_replace)

HCOMM_MPI_API int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  return probe("MPI_Probe", source, tag, comm, true, nullptr, false, nullptr, status);
}
HCOMM_MPI_ALIAS(Probe)

HCOMM_MPI_API int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  return probe("MPI_Iprobe", source, tag, comm, false, flag, false, nullptr, status);
}
HCOMM_MPI_ALIAS(Iprobe)

HCOMM_MPI_API int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  return probe("MPI_Mprobe", source, tag, comm, true, nullptr, true, message, status);
}
HCOMM_MPI_ALIAS(Mprobe)

HCOMM_MPI_API int PMPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
                               MPI_Status* status) {
  return probe("MPI_Improbe", source, tag, comm, false, flag, true, message, status);
}
HCOMM_MPI_ALIAS(Improbe)

HCOMM_MPI_API int PMPI_Mrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Status* status) {
  return matched_receive("MPI_Mrecv", buf, count, datatype, message, false, nullptr, status);
}
HCOMM_MPI_ALIAS(Mrecv)

HCOMM_MPI_API int PMPI_Imrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Request* request) {
  return matched_receive("MPI_Imrecv", buf, count, datatype, message, true, request, MPI_STATUS_IGNORE);
}
HCOMM_MPI_ALIAS(Imrecv)

// Persistent requests: the arguments are checked now; each MPI_Start sends
// or receives anew from the same buffer.
HCOMM_MPI_API int PMPI_Send_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                                 MPI_Request* request) {
  return send_init("MPI_Send_init", buf, count, datatype, dest, tag, comm, request, false);
}
HCOMM_MPI_ALIAS(Send_init)

HCOMM_MPI_API int PMPI_Rsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                                  MPI_Request* request) {
  return send_init("MPI_Rsend_init", buf, count, datatype, dest, tag, comm, request, false);
}
HCOMM_MPI_ALIAS(Rsend_init)

HCOMM_MPI_API int PMPI_Ssend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                                  MPI_Request* request) {
  return send_init("MPI_Ssend_init", buf, count, datatype, dest, tag, comm, request, true);
}
HCOMM_MPI_ALIAS(Ssend_init)

HCOMM_MPI_API int PMPI_Recv_init(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                                 MPI_Request* request) {
  return persistent(
      "MPI_Recv_init", comm, request, [=](const Comm& c) { check_recv(c, buf, count, datatype, source, tag); },
      [=](Request& r, const Comm& c) { start_recv(r, c, buf, count, datatype, source, tag); });
}
HCOMM_MPI_ALIAS(Recv_init)
