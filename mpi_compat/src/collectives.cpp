// Collectives, blocking and nonblocking, on HComm's: a blocking one is
// HComm's blocking form, or its i-form and a wait where requests of other
// communicators are under way (which this layer's wait moves). Data that is only
// moved travels as bytes, so the send and receive types may differ as MPI
// allows; a type whose elements do not lie packed (derived, or a pair with
// padding) goes through a packed copy, unpacked after the call. Reductions
// take HComm's dtype and op (ops.cpp). Gatherv and scatterv are
// alltoallv calls in which only the root sends or receives; alltoallw is
// one whose blocks are bytes, each of its own type.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "mpi_compat/src/datatypes.hpp"
#include "mpi_compat/src/requests.hpp"

using namespace hcomm::mpi;

namespace {

// Stand-ins for buffers a rank does not use, never equal to each other (an
// equal send and receive buffer would mean "in place" to HComm).
unsigned char unused_send, unused_recv;

bool in_place(const void* buf) { return buf == MPI_IN_PLACE; }

void check_root(int root, const Comm& c) {
  if (root < 0 || root >= c.size)
    fail(MPI_ERR_ROOT, "root %d is not a rank of the communicator (ranks 0..%d)", root, c.size - 1);
}

void check_not_in_place(const void* buf, const char* argument) {
  if (in_place(buf)) fail(MPI_ERR_BUFFER, "%s is MPI_IN_PLACE, which this call does not take here", argument);
}

void check_same(size_t send_bytes, size_t recv_bytes) {
  if (send_bytes != recv_bytes)
    fail(MPI_ERR_TRUNCATE, "the send part is %zu bytes but the receive part %zu: the type signatures must match",
         send_bytes, recv_bytes);
}

unsigned char* at(void* buf, size_t offset) { return static_cast<unsigned char*>(buf) + offset; }

// Elements of a buffer: (first, count) ranges.
using Ranges = std::vector<std::pair<size_t, size_t>>;

Ranges whole(int count) { return {{0, static_cast<size_t>(count)}}; }

Ranges blocks(const int* counts, const int* displs, const Comm& c) {
  Ranges ranges;
  for (int i = 0; i < c.size; ++i) ranges.emplace_back(displs[i], counts[i]);
  return ranges;
}

// The buffer HComm uses for buf: buf itself, or for a type whose elements
// do not lie packed a packed copy in `copy`, element k at k * size. The
// ranges HComm reads are packed into it first; the ranges it writes are
// unpacked into buf once the call is done.
void* staged(Request& r, std::vector<unsigned char>& copy, const void* buf, MPI_Datatype type, const Ranges& ranges,
             bool read, bool written) {
  void* user = const_cast<void*>(buf);
  if (in_place(buf) || is_dense(type)) return user;
  LayoutPtr l = layout_of(type);
  size_t end = 0;
  for (const auto& [first, n] : ranges) end = std::max(end, first + n);
  copy.resize(std::max<size_t>(end * l->size, 1));  // never empty: two empty copies would look in place
  if (read)
    for (const auto& [first, n] : ranges) pack(user, first, n, *l, copy.data());
  if (written)
    r.unpack = [&copy, user, l, ranges] {
      for (const auto& [first, n] : ranges) unpack(copy.data(), first, n, n * l->size, *l, user);
    };
  return copy.data();
}

// Holds what a reduction's HComm op uses until the call completes.
void keep_until_done(Request& r, const std::shared_ptr<void>& keep) {
  if (!keep) return;
  r.then = [keep, then = std::move(r.then)] {
    if (then) then();
  };
}

// An HComm collective in its two forms, whose arguments are the same but
// the last: the blocking one (a stream: NULL) and the i-form (a request).
template <class Blocking, class Nonblocking>
struct Forms {
  const char* name;
  Blocking blocking;
  const char* iname;
  Nonblocking nonblocking;
};
#define HCOMM_MPI_FORMS(x) \
  Forms { "hcomm_" #x, hcomm_##x, "hcomm_i" #x, hcomm_i##x }

// Runs HComm's collective for r: its blocking form at once where r is
// blocking, else its i-form, whose request r.hcomm keeps.
template <class Blocking, class Nonblocking, class... Args>
void run(Request& r, const Forms<Blocking, Nonblocking>& forms, Args... args) {
  if (r.blocking)
    check(forms.blocking(args..., nullptr), forms.name);
  else
    issue(r.hcomm, forms.iname, [&](hcomm_request_t* h) { return forms.nonblocking(args..., h); });
}

// counts[i] * element_bytes for every rank: a layout in bytes, appended to r.counts
// (HComm reads it while the call runs); returns its offset there.
size_t add_layout(Request& r, const int* counts, const Comm& c, size_t element_bytes, const char* argument,
                  bool displs) {
  if (!counts) fail(MPI_ERR_ARG, "%s is NULL", argument);
  const size_t at = r.counts.size();
  for (int i = 0; i < c.size; ++i) {
    if (counts[i] < 0) fail(displs ? MPI_ERR_ARG : MPI_ERR_COUNT, "%s[%d] is %d, below 0", argument, i, counts[i]);
    r.counts.push_back(static_cast<size_t>(counts[i]) * element_bytes);
  }
  return at;
}

template <class Start>
int collective(const char* fn, MPI_Comm comm, bool nonblocking, MPI_Request* request, Start start) {
  return call(fn, comm, [&] {
    const Comm& c = comm_of(comm);
    if (!nonblocking) {  // its request lives as long as the call: on the stack
      Request r;
      r.comm = comm;
      // Requests of other communicators move only while this layer polls them.
      r.blocking = !others_pending(comm);
      start(c, r);
      if (r.blocking)
        complete(r);
      else
        wait_request(r, MPI_STATUS_IGNORE, fn);
      return;
    }
    if (!request) fail(MPI_ERR_ARG, "request is NULL");
    auto r = std::make_unique<Request>();
    r->comm = comm;
    start(c, *r);
    *request = add_request(std::move(r));
  });
}

void barrier(const Comm& c, Request& r) { run(r, HCOMM_MPI_FORMS(barrier), c.h); }

void bcast(const Comm& c, Request& r, void* buf, int count, MPI_Datatype type, int root) {
  const size_t bytes = bytes_of(count, type);
  check_root(root, c);
  check_not_in_place(buf, "buffer");
  check_data(buf, bytes, type, "buffer");
  buf = staged(r, r.packed_out, buf, type, whole(count), c.rank == root, c.rank != root);
  run(r, HCOMM_MPI_FORMS(broadcast), buf, buf, bytes, HCOMM_UINT8, root, c.h);
}

// check_data for a reduction's buffer: its type lies packed unless red.packed.
void check_reduced(const void* buf, size_t bytes, const Reduction& red, const char* argument) {
  if (!red.packed) check_buffer(buf, bytes, argument);
}

// Reductions run on HComm's dtype and op for the type (reduction_of), on
// packed copies for a type whose elements do not lie packed.
void reduce(const Comm& c, Request& r, const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op,
            int root) {
  const size_t bytes = bytes_of(count, type);
  check_root(root, c);
  const bool is_root = c.rank == root;
  if (in_place(send) && !is_root) fail(MPI_ERR_BUFFER, "sendbuf is MPI_IN_PLACE on rank %d, not the root", c.rank);
  if (is_root) check_not_in_place(recv, "recvbuf");
  const Reduction red = reduction_of(type, op);
  const void* from = in_place(send) ? recv : send;
  check_reduced(from, bytes, red, in_place(send) ? "recvbuf" : "sendbuf");
  if (is_root) check_reduced(recv, bytes, red, "recvbuf");
  if (red.packed) {
    if (is_root) recv = staged(r, r.packed_out, recv, type, whole(count), in_place(send), true);
    from = in_place(send) ? recv : staged(r, r.packed_in, send, type, whole(count), true, false);
  }
  run(r, HCOMM_MPI_FORMS(reduce), from, is_root ? recv : nullptr, count * red.scale, red.dtype, red.op, root, c.h);
  keep_until_done(r, red.keep);
}

// HComm's allreduce, scan and exscan: each rank's input reduced into its recvbuf.
using ReduceIntoEvery = decltype(HCOMM_MPI_FORMS(allreduce));

// Allreduce, scan and exscan (MPI_IN_PLACE: the input in recvbuf). Where
// `written` is false (exscan's rank 0, whose result MPI leaves undefined)
// recvbuf is not touched and may be NULL.
void reduce_into_every(const Comm& c, Request& r, const ReduceIntoEvery& forms, const void* send, void* recv, int count,
                       MPI_Datatype type, MPI_Op op, bool written) {
  const size_t bytes = bytes_of(count, type);
  check_not_in_place(recv, "recvbuf");
  const Reduction red = reduction_of(type, op);
  const bool touched = written || in_place(send);
  if (touched) check_reduced(recv, bytes, red, "recvbuf");
  const void* from = in_place(send) ? recv : send;
  check_reduced(from, bytes, red, "sendbuf");
  if (red.packed) {
    if (touched) recv = staged(r, r.packed_out, recv, type, whole(count), in_place(send), true);
    from = in_place(send) ? recv : staged(r, r.packed_in, send, type, whole(count), true, false);
  }
  run(r, forms, from, recv, count * red.scale, red.dtype, red.op, c.h);
  keep_until_done(r, red.keep);
}

void allreduce(const Comm& c, Request& r, const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op) {
  reduce_into_every(c, r, HCOMM_MPI_FORMS(allreduce), send, recv, count, type, op, true);
}

void scan(const Comm& c, Request& r, const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op) {
  reduce_into_every(c, r, HCOMM_MPI_FORMS(scan), send, recv, count, type, op, true);
}

void exscan(const Comm& c, Request& r, const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op) {
  reduce_into_every(c, r, HCOMM_MPI_FORMS(exscan), send, recv, count, type, op, c.rank > 0);
}

void allgather(const Comm& c, Request& r, const void* send, int sendcount, MPI_Datatype sendtype, void* recv,
               int recvcount, MPI_Datatype recvtype) {
  const size_t bytes = bytes_of(recvcount, recvtype, "recvcount");
  check_not_in_place(recv, "recvbuf");
  check_data(recv, bytes, recvtype, "recvbuf");
  if (!in_place(send)) {
    check_same(bytes_of(sendcount, sendtype, "sendcount"), bytes);
    check_data(send, bytes, sendtype, "sendbuf");
  }
  send = staged(r, r.packed_in, send, sendtype, whole(sendcount), true, false);
  recv = staged(r, r.packed_out, recv, recvtype, whole(c.size * recvcount), in_place(send), true);
  const void* from = in_place(send) ? at(recv, c.rank * bytes) : send;
  run(r, HCOMM_MPI_FORMS(allgather), from, recv, bytes, HCOMM_UINT8, c.h);
}

void allgatherv(const Comm& c, Request& r, const void* send, int sendcount, MPI_Datatype sendtype, void* recv,
                const int* recvcounts, const int* displs, MPI_Datatype recvtype) {
  const size_t element_bytes = type_of(recvtype, "recvtype").size;
  const size_t counts = add_layout(r, recvcounts, c, element_bytes, "recvcounts", false);
  const size_t offsets = add_layout(r, displs, c, element_bytes, "displs", true);
  check_not_in_place(recv, "recvbuf");
  check_data(recv, std::accumulate(r.counts.begin(), r.counts.begin() + c.size, size_t{0}), recvtype, "recvbuf");
  if (!in_place(send)) {
    check_same(bytes_of(sendcount, sendtype, "sendcount"), r.counts[counts + c.rank]);
    check_data(send, r.counts[counts + c.rank], sendtype, "sendbuf");
  }
  send = staged(r, r.packed_in, send, sendtype, whole(sendcount), true, false);
  recv = staged(r, r.packed_out, recv, recvtype, blocks(recvcounts, displs, c), in_place(send), true);
  const void* from = in_place(send) ? at(recv, r.counts[offsets + c.rank]) : send;
  run(r, HCOMM_MPI_FORMS(allgatherv), from, recv, &r.counts[counts], &r.counts[offsets], HCOMM_UINT8, c.h);
}

void gather(const Comm& c, Request& r, const void* send, int sendcount, MPI_Datatype sendtype, void* recv,
            int recvcount, MPI_Datatype recvtype, int root) {
  check_root(root, c);
  const bool is_root = c.rank == root;
  if (in_place(send) && !is_root) fail(MPI_ERR_BUFFER, "sendbuf is MPI_IN_PLACE on rank %d, not the root", c.rank);
  size_t bytes = 0;
  if (is_root) {
    bytes = bytes_of(recvcount, recvtype, "recvcount");
    check_not_in_place(recv, "recvbuf");
    check_data(recv, bytes, recvtype, "recvbuf");
    if (!in_place(send)) check_same(bytes_of(sendcount, sendtype, "sendcount"), bytes);
    recv = staged(r, r.packed_out, recv, recvtype, whole(c.size * recvcount), in_place(send), true);
  } else {
    bytes = bytes_of(sendcount, sendtype, "sendcount");
  }
  if (!in_place(send)) check_data(send, bytes, sendtype, "sendbuf");
  send = staged(r, r.packed_in, send, sendtype, whole(sendcount), true, false);
  const void* from = in_place(send) ? at(recv, root * bytes) : send;
  run(r, HCOMM_MPI_FORMS(gather), from, is_root ? recv : nullptr, bytes, HCOMM_UINT8, root, c.h);
}

void scatter(const Comm& c, Request& r, const void* send, int sendcount, MPI_Datatype sendtype, void* recv,
             int recvcount, MPI_Datatype recvtype, int root) {
  check_root(root, c);
  const bool is_root = c.rank == root;
  if (in_place(recv) && !is_root) fail(MPI_ERR_BUFFER, "recvbuf is MPI_IN_PLACE on rank %d, not the root", c.rank);
  size_t bytes = 0;
  if (is_root) {
    bytes = bytes_of(sendcount, sendtype, "sendcount");
    check_not_in_place(send, "sendbuf");
    check_data(send, bytes, sendtype, "sendbuf");
    if (!in_place(recv)) check_same(bytes, bytes_of(recvcount, recvtype, "recvcount"));
    send = staged(r, r.packed_in, send, sendtype, whole(c.size * sendcount), true, false);
  } else {
    bytes = bytes_of(recvcount, recvtype, "recvcount");
  }
  if (!in_place(recv)) check_data(recv, bytes, recvtype, "recvbuf");
  recv = staged(r, r.packed_out, recv, recvtype, whole(recvcount), false, true);
  void* into = in_place(recv) ? at(const_cast<void*>(send), root * bytes) : recv;
  run(r, HCOMM_MPI_FORMS(scatter), is_root ? send : nullptr, into, bytes, HCOMM_UINT8, root, c.h);
}

// Gatherv and scatterv as alltoallv: the layouts of this rank's one-sided
// part, every other entry 0.
struct Layouts {
  size_t send_counts, send_displs, recv_counts, recv_displs;
};

Layouts zero_layouts(Request& r, const Comm& c) {
  const size_t n = static_cast<size_t>(c.size);
  r.counts.assign(4 * n, 0);
  return {0, n, 2 * n, 3 * n};
}

// HComm's alltoallv on byte layouts in r.counts (MPI_Alltoallv's, and the
// one-sided ones above); a side without a buffer gets a placeholder.
void alltoallv_bytes(const Comm& c, Request& r, const void* send, void* recv, const Layouts& l) {
  const void* from = send ? send : &unused_send;
  void* into = recv ? recv : &unused_recv;
  run(r, HCOMM_MPI_FORMS(alltoallv), from, &r.counts[l.send_counts], &r.counts[l.send_displs], into,
      &r.counts[l.recv_counts], &r.counts[l.recv_displs], HCOMM_UINT8, c.h);
}

// The root's blocks of a gatherv (recvcounts) or scatterv (sendcounts) in
// bytes into r.counts at `counts_at` and `displs_at`, checked.
void root_blocks(Request& r, const Comm& c, const int* counts, const int* displs, MPI_Datatype type,
                 const char* counts_name, const char* type_name, size_t counts_at, size_t displs_at) {
  const size_t element_bytes = type_of(type, type_name).size;
  if (!counts || !displs) fail(MPI_ERR_ARG, "%s or displs is NULL on the root", counts_name);
  for (int i = 0; i < c.size; ++i) {
    if (counts[i] < 0) fail(MPI_ERR_COUNT, "%s[%d] is %d, below 0", counts_name, i, counts[i]);
    if (displs[i] < 0) fail(MPI_ERR_ARG, "displs[%d] is %d, below 0", i, displs[i]);
    r.counts[counts_at + i] = static_cast<size_t>(counts[i]) * element_bytes;
    r.counts[displs_at + i] = static_cast<size_t>(displs[i]) * element_bytes;
  }
}

// The bytes of the root's blocks together, for its buffer's check.
size_t root_total(const Request& r, const Comm& c, size_t counts_at) {
  return std::accumulate(&r.counts[counts_at], &r.counts[counts_at] + c.size, size_t{0});
}

void gatherv(const Comm& c, Request& r, const void* send, int sendcount, MPI_Datatype sendtype, void* recv,
             const int* recvcounts, const int* displs, MPI_Datatype recvtype, int root) {
  check_root(root, c);
  const bool is_root = c.rank == root;
  if (in_place(send) && !is_root) fail(MPI_ERR_BUFFER, "sendbuf is MPI_IN_PLACE on rank %d, not the root", c.rank);
  const Layouts l = zero_layouts(r, c);
  const size_t bytes = in_place(send) ? 0 : bytes_of(sendcount, sendtype, "sendcount");
  if (!in_place(send)) check_data(send, bytes, sendtype, "sendbuf");
  if (is_root) {
    check_not_in_place(recv, "recvbuf");
    root_blocks(r, c, recvcounts, displs, recvtype, "recvcounts", "recvtype", l.recv_counts, l.recv_displs);
    if (in_place(send))
      r.counts[l.recv_counts + root] = 0;  // the root's own block is in place already
    else
      check_same(bytes, r.counts[l.recv_counts + root]);
    check_data(recv, root_total(r, c, l.recv_counts), recvtype, "recvbuf");
    recv = staged(r, r.packed_out, recv, recvtype, blocks(recvcounts, displs, c), in_place(send), true);
  }
  send = staged(r, r.packed_in, send, sendtype, whole(sendcount), true, false);
  r.counts[l.send_counts + root] = bytes;
  alltoallv_bytes(c, r, in_place(send) ? nullptr : send, is_root ? recv : nullptr, l);
}

void scatterv(const Comm& c, Request& r, const void* send, const int* sendcounts, const int* displs,
              MPI_Datatype sendtype, void* recv, int recvcount, MPI_Datatype recvtype, int root) {
  check_root(root, c);
  const bool is_root = c.rank == root;
  if (in_place(recv) && !is_root) fail(MPI_ERR_BUFFER, "recvbuf is MPI_IN_PLACE on rank %d, not the root", c.rank);
  const Layouts l = zero_layouts(r, c);
  const size_t bytes = in_place(recv) ? 0 : bytes_of(recvcount, recvtype, "recvcount");
  if (!in_place(recv)) check_data(recv, bytes, recvtype, "recvbuf");
  if (is_root) {
    check_not_in_place(send, "sendbuf");
    root_blocks(r, c, sendcounts, displs, sendtype, "sendcounts", "sendtype", l.send_counts, l.send_displs);
    if (in_place(recv))
      r.counts[l.send_counts + root] = 0;  // the root's own block stays where it is
    else
      check_same(r.counts[l.send_counts + root], bytes);
    check_data(send, root_total(r, c, l.send_counts), sendtype, "sendbuf");
    send = staged(r, r.packed_in, send, sendtype, blocks(sendcounts, displs, c), true, false);
  }
  recv = staged(r, r.packed_out, recv, recvtype, whole(recvcount), false, true);
  r.counts[l.recv_counts + root] = bytes;
  alltoallv_bytes(c, r, is_root ? send : nullptr, in_place(recv) ? nullptr : recv, l);
}

void alltoall(const Comm& c, Request& r, const void* send, int sendcount, MPI_Datatype sendtype, void* recv,
              int recvcount, MPI_Datatype recvtype) {
  const size_t bytes = bytes_of(recvcount, recvtype, "recvcount");
  check_not_in_place(recv, "recvbuf");
  check_data(recv, bytes, recvtype, "recvbuf");
  if (!in_place(send)) {
    check_same(bytes_of(sendcount, sendtype, "sendcount"), bytes);
    check_data(send, bytes, sendtype, "sendbuf");
  }
  send = staged(r, r.packed_in, send, sendtype, whole(c.size * sendcount), true, false);
  recv = staged(r, r.packed_out, recv, recvtype, whole(c.size * recvcount), in_place(send), true);
  const void* from = in_place(send) ? recv : send;
  run(r, HCOMM_MPI_FORMS(alltoall), from, recv, bytes, HCOMM_UINT8, c.h);
}

void alltoallv(const Comm& c, Request& r, const void* send, const int* sendcounts, const int* sdispls,
               MPI_Datatype sendtype, void* recv, const int* recvcounts, const int* rdispls, MPI_Datatype recvtype) {
  check_not_in_place(recv, "recvbuf");
  const size_t recv_bytes = type_of(recvtype, "recvtype").size;
  Layouts l{};
  l.recv_counts = add_layout(r, recvcounts, c, recv_bytes, "recvcounts", false);
  l.recv_displs = add_layout(r, rdispls, c, recv_bytes, "rdispls", true);
  if (in_place(send)) {
    l.send_counts = l.recv_counts;  // HComm's in place: the receive layout is the send layout
    l.send_displs = l.recv_displs;
  } else {
    const size_t send_bytes = type_of(sendtype, "sendtype").size;
    l.send_counts = add_layout(r, sendcounts, c, send_bytes, "sendcounts", false);
    l.send_displs = add_layout(r, sdispls, c, send_bytes, "sdispls", true);
    send = staged(r, r.packed_in, send, sendtype, blocks(sendcounts, sdispls, c), true, false);
  }
  recv = staged(r, r.packed_out, recv, recvtype, blocks(recvcounts, rdispls, c), in_place(send), true);
  alltoallv_bytes(c, r, in_place(send) ? recv : send, recv, l);
}

// One side of an alltoallw as HComm's alltoallv takes it, in bytes: block i
// holds counts[i] elements of types[i] at displs[i] bytes from buf. Where
// every type lies packed HComm moves the blocks where they are; otherwise
// all of them go through `copy`, one after another, packed into it before
// the call where `read` and unpacked from it afterwards where `written`.
// The byte counts and displacements are appended to r.counts.
struct WSide {
  void* buf;      // what HComm uses
  size_t counts;  // where the side's byte counts start in r.counts
  size_t displs;  // and its displacements
};

WSide alltoallw_side(Request& r, std::vector<unsigned char>& copy, const Comm& c, const char* side, const void* buf,
                     const int* counts, const int* displs, const MPI_Datatype* types, bool read, bool written) {
  if (!counts || !displs || !types) fail(MPI_ERR_ARG, "%scounts, %sdispls or %stypes is NULL", side, side, side);
  const size_t n = static_cast<size_t>(c.size);
  WSide w{const_cast<void*>(buf), r.counts.size(), r.counts.size() + n};
  r.counts.resize(r.counts.size() + 2 * n);
  const std::string types_name = std::string(side) + "types", buf_name = std::string(side) + "buf";
  bool dense = true;
  size_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    if (counts[i] < 0) fail(MPI_ERR_COUNT, "%scounts[%zu] is %d, below 0", side, i, counts[i]);
    if (displs[i] < 0) fail(MPI_ERR_ARG, "%sdispls[%zu] is %d, below 0", side, i, displs[i]);
    size_t bytes = 0;  // an empty block's type is not looked at
    if (counts[i] > 0) {
      bytes = static_cast<size_t>(counts[i]) * type_of(types[i], types_name.c_str()).size;
      check_data(buf, bytes, types[i], buf_name.c_str());
      dense = dense && is_dense(types[i]);
    }
    r.counts[w.counts + i] = bytes;
    r.counts[w.displs + i] = static_cast<size_t>(displs[i]);
    total += bytes;
  }
  if (!w.buf) w.buf = read && !written ? &unused_send : &unused_recv;  // nothing to move: never NULL, never alike
  if (dense) return w;
  struct Block {
    unsigned char* user;
    size_t packed_at, count, bytes;
    LayoutPtr layout;
  };
  std::vector<Block> blocks;
  copy.resize(std::max<size_t>(total, 1));
  size_t packed_at = 0;
  for (size_t i = 0; i < n; ++i) {
    const size_t bytes = r.counts[w.counts + i];
    if (bytes == 0) continue;
    Block b{at(const_cast<void*>(buf), static_cast<size_t>(displs[i])), packed_at, static_cast<size_t>(counts[i]),
            bytes, layout_of(types[i], types_name.c_str())};
    if (read) pack(b.user, 0, b.count, *b.layout, copy.data() + b.packed_at);
    r.counts[w.displs + i] = packed_at;
    packed_at += bytes;
    blocks.push_back(std::move(b));
  }
  if (written)
    r.unpack = [&copy, blocks = std::move(blocks)] {
      for (const Block& b : blocks) unpack(copy.data() + b.packed_at, 0, b.count, b.bytes, *b.layout, b.user);
    };
  w.buf = copy.data();
  return w;
}

// MPI_IN_PLACE: the receive side is the send side too, as HComm's in place has it.
void alltoallw(const Comm& c, Request& r, const void* send, const int* sendcounts, const int* sdispls,
               const MPI_Datatype* sendtypes, void* recv, const int* recvcounts, const int* rdispls,
               const MPI_Datatype* recvtypes) {
  check_not_in_place(recv, "recvbuf");
  const WSide in = in_place(send)
                       ? WSide{}
                       : alltoallw_side(r, r.packed_in, c, "send", send, sendcounts, sdispls, sendtypes, true, false);
  const WSide out =
      alltoallw_side(r, r.packed_out, c, "recv", recv, recvcounts, rdispls, recvtypes, in_place(send), true);
  const WSide& from = in_place(send) ? out : in;
  run(r, HCOMM_MPI_FORMS(alltoallv), from.buf, &r.counts[from.counts], &r.counts[from.displs], out.buf,
      &r.counts[out.counts], &r.counts[out.displs], HCOMM_UINT8, c.h);
}

// Reduce-scatter with recvcounts (counts[i] for every i) in elements; in
// place, HComm leaves this rank's block where it was in the input, and MPI
// wants it at the start of recvbuf.
// A type whose elements do not lie packed goes through packed copies; in
// place, the result is unpacked from this rank's block of the copy into the
// start of recvbuf.
void reduce_scatter_counts(const Comm& c, Request& r, const void* send, void* recv, MPI_Datatype type, MPI_Op op,
                           const std::vector<size_t>& counts) {
  const size_t element_bytes = type_of(type).size;
  check_not_in_place(recv, "recvbuf");
  const Reduction red = reduction_of(type, op);
  const size_t total = std::accumulate(counts.begin(), counts.end(), size_t{0});
  const size_t before = std::accumulate(counts.begin(), counts.begin() + c.rank, size_t{0});
  const size_t mine = counts[c.rank] * element_bytes;
  void* into = recv;
  if (in_place(send)) {
    check_reduced(recv, total * element_bytes, red, "recvbuf");
    if (red.packed) {
      LayoutPtr l = layout_of(type);
      send = staged(r, r.packed_in, recv, type, whole(static_cast<int>(total)), true, false);
      into = at(r.packed_in.data(), before * element_bytes);
      r.unpack = [l, recv, into, n = counts[c.rank], mine] {
        unpack(static_cast<const unsigned char*>(into), 0, n, mine, *l, recv);
      };
    } else {
      send = recv;
      into = at(recv, before * element_bytes);
      if (before && mine) r.then = [recv, into, mine] { std::memmove(recv, into, mine); };
    }
  } else {
    check_reduced(send, total * element_bytes, red, "sendbuf");
    check_reduced(recv, mine, red, "recvbuf");
    if (red.packed) {
      send = staged(r, r.packed_in, send, type, whole(static_cast<int>(total)), true, false);
      into = staged(r, r.packed_out, recv, type, whole(static_cast<int>(counts[c.rank])), false, true);
    }
  }
  for (size_t n : counts) r.counts.push_back(n * red.scale);
  const bool equal = std::all_of(counts.begin(), counts.end(), [&](size_t n) { return n == counts[0]; });
  if (equal)
    run(r, HCOMM_MPI_FORMS(reduce_scatter), send, into, r.counts[0], red.dtype, red.op, c.h);
  else
    run(r, HCOMM_MPI_FORMS(reduce_scatter_v), send, into, r.counts.data(), red.dtype, red.op, c.h);
  keep_until_done(r, red.keep);
}

void reduce_scatter_block(const Comm& c, Request& r, const void* send, void* recv, int recvcount, MPI_Datatype type,
                          MPI_Op op) {
  if (recvcount < 0) fail(MPI_ERR_COUNT, "recvcount is %d, below 0", recvcount);
  reduce_scatter_counts(c, r, send, recv, type, op, std::vector<size_t>(c.size, static_cast<size_t>(recvcount)));
}

void reduce_scatter(const Comm& c, Request& r, const void* send, void* recv, const int* recvcounts, MPI_Datatype type,
                    MPI_Op op) {
  if (!recvcounts) fail(MPI_ERR_ARG, "recvcounts is NULL");
  std::vector<size_t> counts(c.size);
  for (int i = 0; i < c.size; ++i) {
    if (recvcounts[i] < 0) fail(MPI_ERR_COUNT, "recvcounts[%d] is %d, below 0", i, recvcounts[i]);
    counts[i] = static_cast<size_t>(recvcounts[i]);
  }
  reduce_scatter_counts(c, r, send, recv, type, op, counts);
}

}  // namespace

// Each collective twice: MPI_<name> waits for it, MPI_I<name> returns a request.

HCOMM_MPI_API int PMPI_Barrier(MPI_Comm comm) {
  return collective("MPI_Barrier", comm, false, nullptr, [&](const Comm& c, Request& r) { barrier(c, r); });
}
HCOMM_MPI_ALIAS(Barrier)

HCOMM_MPI_API int PMPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  return collective("MPI_Ibarrier", comm, true, request, [&](const Comm& c, Request& r) { barrier(c, r); });
}
HCOMM_MPI_ALIAS(Ibarrier)

HCOMM_MPI_API int PMPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return collective("MPI_Bcast", comm, false, nullptr,
                    [&](const Comm& c, Request& r) { bcast(c, r, buffer, count, datatype, root); });
}
HCOMM_MPI_ALIAS(Bcast)

HCOMM_MPI_API int PMPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                              MPI_Request* request) {
  return collective("MPI_Ibcast", comm, true, request,
                    [&](const Comm& c, Request& r) { bcast(c, r, buffer, count, datatype, root); });
}
HCOMM_MPI_ALIAS(Ibcast)

HCOMM_MPI_API int PMPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                              MPI_Comm comm) {
  return collective("MPI_Reduce", comm, false, nullptr,
                    [&](const Comm& c, Request& r) { reduce(c, r, sendbuf, recvbuf, count, datatype, op, root); });
}
HCOMM_MPI_ALIAS(Reduce)

HCOMM_MPI_API int PMPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                               int root, MPI_Comm comm, MPI_Request* request) {
  return collective("MPI_Ireduce", comm, true, request,
                    [&](const Comm& c, Request& r) { reduce(c, r, sendbuf, recvbuf, count, datatype, op, root); });
}
HCOMM_MPI_ALIAS(Ireduce)

HCOMM_MPI_API int PMPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                 MPI_Comm comm) {
  return collective("MPI_Allreduce", comm, false, nullptr,
                    [&](const Comm& c, Request& r) { allreduce(c, r, sendbuf, recvbuf, count, datatype, op); });
}
HCOMM_MPI_ALIAS(Allreduce)

HCOMM_MPI_API int PMPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                  MPI_Comm comm, MPI_Request* request) {
  return collective("MPI_Iallreduce", comm, true, request,
                    [&](const Comm& c, Request& r) { allreduce(c, r, sendbuf, recvbuf, count, datatype, op); });
}
HCOMM_MPI_ALIAS(Iallreduce)

HCOMM_MPI_API int PMPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return collective("MPI_Allgather", comm, false, nullptr, [&](const Comm& c, Request& r) {
    allgather(c, r, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}
HCOMM_MPI_ALIAS(Allgather)

HCOMM_MPI_API int PMPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return collective("MPI_Iallgather", comm, true, request, [&](const Comm& c, Request& r) {
    allgather(c, r, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}
HCOMM_MPI_ALIAS(Iallgather)

HCOMM_MPI_API int PMPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  return collective("MPI_Allgatherv", comm, false, nullptr, [&](const Comm& c, Request& r) {
    allgatherv(c, r, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype);
  });
}
HCOMM_MPI_ALIAS(Allgatherv)

HCOMM_MPI_API int PMPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                   const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                   MPI_Request* request) {
  return collective("MPI_Iallgatherv", comm, true, request, [&](const Comm& c, Request& r) {
    allgatherv(c, r, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype);
  });
}
HCOMM_MPI_ALIAS(Iallgatherv)

HCOMM_MPI_API int PMPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                              MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return collective("MPI_Gather", comm, false, nullptr, [&](const Comm& c, Request& r) {
    gather(c, r, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  });
}
HCOMM_MPI_ALIAS(Gather)

HCOMM_MPI_API int PMPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                               MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  return collective("MPI_Igather", comm, true, request, [&](const Comm& c, Request& r) {
    gather(c, r, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  });
}
HCOMM_MPI_ALIAS(Igather)

HCOMM_MPI_API int PMPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                               const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                               MPI_Comm comm) {
  return collective("MPI_Gatherv", comm, false, nullptr, [&](const Comm& c, Request& r) {
    gatherv(c, r, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root);
  });
}
HCOMM_MPI_ALIAS(Gatherv)

HCOMM_MPI_API int PMPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                                MPI_Comm comm, MPI_Request* request) {
  return collective("MPI_Igatherv", comm, true, request, [&](const Comm& c, Request& r) {
    gatherv(c, r, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root);
  });
}
HCOMM_MPI_ALIAS(Igatherv)

HCOMM_MPI_API int PMPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                               MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return collective("MPI_Scatter", comm, false, nullptr, [&](const Comm& c, Request& r) {
    scatter(c, r, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  });
}
HCOMM_MPI_ALIAS(Scatter)

HCOMM_MPI_API int PMPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  return collective("MPI_Iscatter", comm, true, request, [&](const Comm& c, Request& r) {
    scatter(c, r, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  });
}
HCOMM_MPI_ALIAS(Iscatter)

HCOMM_MPI_API int PMPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                                void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return collective("MPI_Scatterv", comm, false, nullptr, [&](const Comm& c, Request& r) {
    scatterv(c, r, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root);
  });
}
HCOMM_MPI_ALIAS(Scatterv)

HCOMM_MPI_API int PMPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                                 MPI_Request* request) {
  return collective("MPI_Iscatterv", comm, true, request, [&](const Comm& c, Request& r) {
    scatterv(c, r, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root);
  });
}
HCOMM_MPI_ALIAS(Iscatterv)

HCOMM_MPI_API int PMPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                MPI_Datatype recvtype, MPI_Comm comm) {
  return collective("MPI_Alltoall", comm, false, nullptr, [&](const Comm& c, Request& r) {
    alltoall(c, r, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}
HCOMM_MPI_ALIAS(Alltoall)

HCOMM_MPI_API int PMPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return collective("MPI_Ialltoall", comm, true, request, [&](const Comm& c, Request& r) {
    alltoall(c, r, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}
HCOMM_MPI_ALIAS(Ialltoall)

HCOMM_MPI_API int PMPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                 MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                                 MPI_Datatype recvtype, MPI_Comm comm) {
  return collective("MPI_Alltoallv", comm, false, nullptr, [&](const Comm& c, Request& r) {
    alltoallv(c, r, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype);
  });
}
HCOMM_MPI_ALIAS(Alltoallv)

HCOMM_MPI_API int PMPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                  MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return collective("MPI_Ialltoallv", comm, true, request, [&](const Comm& c, Request& r) {
    alltoallv(c, r, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype);
  });
}
HCOMM_MPI_ALIAS(Ialltoallv)

HCOMM_MPI_API int PMPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                                            MPI_Op op, MPI_Comm comm) {
  return collective("MPI_Reduce_scatter_block", comm, false, nullptr, [&](const Comm& c, Request& r) {
    reduce_scatter_block(c, r, sendbuf, recvbuf, recvcount, datatype, op);
  });
}
HCOMM_MPI_ALIAS(Reduce_scatter_block)

HCOMM_MPI_API int PMPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                                             MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return collective("MPI_Ireduce_scatter_block", comm, true, request, [&](const Comm& c, Request& r) {
    reduce_scatter_block(c, r, sendbuf, recvbuf, recvcount, datatype, op);
  });
}
HCOMM_MPI_ALIAS(Ireduce_scatter_block)

HCOMM_MPI_API int PMPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype,
                                      MPI_Op op, MPI_Comm comm) {
  return collective("MPI_Reduce_scatter", comm, false, nullptr, [&](const Comm& c, Request& r) {
    reduce_scatter(c, r, sendbuf, recvbuf, recvcounts, datatype, op);
  });
}
HCOMM_MPI_ALIAS(Reduce_scatter)

HCOMM_MPI_API int PMPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return collective("MPI_Ireduce_scatter", comm, true, request, [&](const Comm& c, Request& r) {
    reduce_scatter(c, r, sendbuf, recvbuf, recvcounts, datatype, op);
  });
}
HCOMM_MPI_ALIAS(Ireduce_scatter)

HCOMM_MPI_API int PMPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                            MPI_Comm comm) {
  return collective("MPI_Scan", comm, false, nullptr,
                    [&](const Comm& c, Request& r) { scan(c, r, sendbuf, recvbuf, count, datatype, op); });
}
HCOMM_MPI_ALIAS(Scan)

HCOMM_MPI_API int PMPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                             MPI_Comm comm, MPI_Request* request) {
  return collective("MPI_Iscan", comm, true, request,
                    [&](const Comm& c, Request& r) { scan(c, r, sendbuf, recvbuf, count, datatype, op); });
}
HCOMM_MPI_ALIAS(Iscan)

HCOMM_MPI_API int PMPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm) {
  return collective("MPI_Exscan", comm, false, nullptr,
                    [&](const Comm& c, Request& r) { exscan(c, r, sendbuf, recvbuf, count, datatype, op); });
}
HCOMM_MPI_ALIAS(Exscan)

HCOMM_MPI_API int PMPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                               MPI_Comm comm, MPI_Request* request) {
  return collective("MPI_Iexscan", comm, true, request,
                    [&](const Comm& c, Request& r) { exscan(c, r, sendbuf, recvbuf, count, datatype, op); });
}
HCOMM_MPI_ALIAS(Iexscan)

HCOMM_MPI_API int PMPI_Alltoallw(const void* sendbuf, const int* sendcounts, const int* sdispls,
                                 const MPI_Datatype* sendtypes, void* recvbuf, const int* recvcounts,
                                 const int* rdispls, const MPI_Datatype* recvtypes, MPI_Comm comm) {
  return collective("MPI_Alltoallw", comm, false, nullptr, [&](const Comm& c, Request& r) {
    alltoallw(c, r, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes);
  });
}
HCOMM_MPI_ALIAS(Alltoallw)

HCOMM_MPI_API int PMPI_Ialltoallw(const void* sendbuf, const int* sendcounts, const int* sdispls,
                                  const MPI_Datatype* sendtypes, void* recvbuf, const int* recvcounts,
                                  const int* rdispls, const MPI_Datatype* recvtypes, MPI_Comm comm,
                                  MPI_Request* request) {
  return collective("MPI_Ialltoallw", comm, true, request, [&](const Comm& c, Request& r) {
    alltoallw(c, r, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes);
  });
}
HCOMM_MPI_ALIAS(Ialltoallw)
