// The collectives of the C API: one validation path for all of them (a clear
// error naming the argument, nothing sent), then the communicator.
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/algorithm/layout.hpp"
#include "core/api/checks.hpp"
#include "core/comm/communicator.hpp"
#include "core/comm/stream_order.hpp"
#include "core/common/settings.hpp"
#include "core/device/staging.hpp"
#include "hcomm/plugin/layout.hpp"

namespace hcomm::api {
namespace {

// One call as the public API states it; arguments a collective lacks keep
// their defaults, so that calls that differ only there share a schedule.
struct Call {
  hcomm_coll_t coll;
  const void* send = nullptr;
  void* recv = nullptr;
  size_t count = 0;
  hcomm_dtype_t dtype = HCOMM_UINT8;
  hcomm_op_t op = HCOMM_SUM;
  int root = 0;
  const size_t* send_counts = nullptr;
  const size_t* send_displs = nullptr;
  const size_t* recv_counts = nullptr;
  const size_t* recv_displs = nullptr;
};

struct Shape {
  bool reduces = false;
  bool rooted = false;
  bool per_rank_blocks = false;  // count is per rank; a buffer holds nranks blocks
  bool variable = false;         // counts and displacements per rank
  bool rank_order = false;       // combines in rank order (scan, exscan), where AVG has no one divisor
  const char* in_place = "";     // the pointer relation of the in-place form, for errors
};

Shape shape_of(hcomm_coll_t coll) {
  switch (coll) {
    case HCOMM_COLL_ALLREDUCE: return {.reduces = true, .in_place = "sendbuf == recvbuf"};
    case HCOMM_COLL_BROADCAST: return {.rooted = true, .in_place = "sendbuf == recvbuf"};
    case HCOMM_COLL_REDUCE: return {.reduces = true, .rooted = true, .in_place = "sendbuf == recvbuf on the root"};
    case HCOMM_COLL_ALLGATHER:
      return {.per_rank_blocks = true, .in_place = "sendbuf == recvbuf + rank*count elements"};
    case HCOMM_COLL_REDUCE_SCATTER:
      return {.reduces = true, .per_rank_blocks = true, .in_place = "recvbuf == sendbuf + rank*recvcount elements"};
    case HCOMM_COLL_ALLTOALL: return {.per_rank_blocks = true, .in_place = "sendbuf == recvbuf"};
    case HCOMM_COLL_GATHER:
      return {.rooted = true, .per_rank_blocks = true, .in_place = "sendbuf == recvbuf + root*count elements on the root"};
    case HCOMM_COLL_SCATTER:
      return {.rooted = true, .per_rank_blocks = true, .in_place = "recvbuf == sendbuf + root*count elements on the root"};
    case HCOMM_COLL_ALLGATHERV: return {.variable = true, .in_place = "sendbuf == recvbuf + displs[rank] elements"};
    case HCOMM_COLL_REDUCE_SCATTER_V:
      return {.reduces = true,
              .variable = true,
              .in_place = "recvbuf == sendbuf + recvcounts[0] + .. + recvcounts[rank-1] elements"};
    case HCOMM_COLL_ALLTOALLV: return {.variable = true, .in_place = "sendbuf == recvbuf"};
    case HCOMM_COLL_SCAN:
    case HCOMM_COLL_EXSCAN: return {.reduces = true, .rank_order = true, .in_place = "sendbuf == recvbuf"};
    default: return {};
  }
}

// counts (and displs, where the layout has them) hold one entry per rank;
// the blocks' ends and the counts' sum must fit the byte limit.
void check_layout(const char* fn, const char* counts_name, const size_t* counts, const char* displs_name,
                  const size_t* displs, int n, hcomm_dtype_t dtype) {
  HCOMM_ARG_CHECK(counts, "%s: %s is NULL; pass an array of one count per rank (%d)", fn, counts_name, n);
  HCOMM_ARG_CHECK(!displs_name || displs, "%s: %s is NULL; pass an array of one displacement per rank (%d)", fn,
                  displs_name, n);
  const size_t limit = kMaxBytes / dtype_size(dtype);
  size_t total = 0;
  for (int r = 0; r < n; ++r) {
    HCOMM_ARG_CHECK(counts[r] <= limit - total, "%s: the %s add up to more than %zu elements of %s, which overflows "
                    "the byte size; split the call", fn, counts_name, limit, dtype_name(dtype));
    total += counts[r];
    HCOMM_ARG_CHECK(!displs || displs[r] <= limit - counts[r],
                    "%s: %s[%d] + %s[%d] (%zu + %zu elements of %s) overflows the byte size; split the call", fn,
                    displs_name, r, counts_name, r, displs[r], counts[r], dtype_name(dtype));
  }
}

void check_layouts(const char* fn, const Call& c, int n) {
  switch (c.coll) {
    case HCOMM_COLL_ALLGATHERV:
      check_layout(fn, "recvcounts", c.recv_counts, "displs", c.recv_displs, n, c.dtype);
      break;
    case HCOMM_COLL_REDUCE_SCATTER_V: check_layout(fn, "recvcounts", c.recv_counts, nullptr, nullptr, n, c.dtype); break;
    case HCOMM_COLL_ALLTOALLV:
      if (c.send != c.recv)  // in place ignores the send layout
        check_layout(fn, "sendcounts", c.send_counts, "sdispls", c.send_displs, n, c.dtype);
      check_layout(fn, "recvcounts", c.recv_counts, "rdispls", c.recv_displs, n, c.dtype);
      break;
    default: break;
  }
}

// Whether this rank's input already lies where its output goes, by the
// pointer relation hcomm.h states for the collective: the input at the
// rank's block of the output (or the output at its block of the input).
bool in_place(const Call& c, const hcomm_coll_args_t& args, int rank) {
  const auto send = reinterpret_cast<uintptr_t>(c.send), recv = reinterpret_cast<uintptr_t>(c.recv);
  const bool root = rank == c.root;
  using plugin::Blocks;
  switch (c.coll) {
    case HCOMM_COLL_ALLREDUCE:
    case HCOMM_COLL_ALLTOALL:
    case HCOMM_COLL_ALLTOALLV:
    case HCOMM_COLL_SCAN:
    case HCOMM_COLL_EXSCAN: return send == recv;
    case HCOMM_COLL_BROADCAST: return !root || send == recv;  // non-roots read no sendbuf: SEND is RECV
    case HCOMM_COLL_REDUCE: return root && send == recv;
    case HCOMM_COLL_ALLGATHER:
    case HCOMM_COLL_ALLGATHERV:
      return send == recv + Blocks::recv(args).offset(rank);
    case HCOMM_COLL_REDUCE_SCATTER:
    case HCOMM_COLL_REDUCE_SCATTER_V:
      return recv == send + Blocks::send(args).offset(rank);
    case HCOMM_COLL_GATHER:
      return root && send == recv + Blocks::recv(args).offset(c.root);
    case HCOMM_COLL_SCATTER:
      return root && recv == send + Blocks::send(args).offset(c.root);
    default: return true;  // barrier: no buffers
  }
}

// Buffers this rank uses must be there, and apart unless the call is in place.
void check_buffers(const char* fn, const Call& c, uint64_t send_bytes, uint64_t recv_bytes, bool in_place,
                   const Shape& shape) {
  HCOMM_ARG_CHECK(c.send || !send_bytes, "%s: sendbuf is NULL but count is not 0 (this rank sends %llu bytes from it)",
                  fn, static_cast<unsigned long long>(send_bytes));
  HCOMM_ARG_CHECK(c.recv || !recv_bytes,
                  "%s: recvbuf is NULL but count is not 0 (this rank receives %llu bytes into it)", fn,
                  static_cast<unsigned long long>(recv_bytes));
  if (in_place || !send_bytes || !recv_bytes) return;
  const auto s = reinterpret_cast<uintptr_t>(c.send), r = reinterpret_cast<uintptr_t>(c.recv);
  HCOMM_ARG_CHECK(s + send_bytes <= r || r + recv_bytes <= s,
                  "%s: sendbuf and recvbuf overlap but the call is not in place (in place is %s); pass disjoint "
                  "buffers or the in-place form",
                  fn, shape.in_place);
}

// A checked call's arguments as the communicator takes them, and the bytes
// this rank sends from and receives into its buffers.
struct Prepared {
  hcomm_coll_args_t args;
  uint64_t send_bytes = 0, recv_bytes = 0;
};

Prepared prepare(const Call& call, int nranks, int rank) {
  Prepared p{.args = make_args(call.coll, call.count, call.dtype, call.op, call.root)};
  p.args.recv_counts = call.recv_counts;
  p.args.recv_displs = call.recv_displs;
  p.args.in_place = in_place(call, p.args, rank);
  if (!(p.args.in_place && call.coll == HCOMM_COLL_ALLTOALLV)) {  // in place ignores the send layout
    p.args.send_counts = call.send_counts;
    p.args.send_displs = call.send_displs;
  }
  p.send_bytes = algorithm::send_bytes(p.args, nranks, rank);
  p.recv_bytes = algorithm::recv_bytes(p.args, nranks, rank);
  return p;
}

// Where a call on device buffers has its data on the host: a staging area
// (device::Staging) and the operation's buffers in it, or the caller's own
// where they are host memory. An in-place call's buffer is one region,
// staged whole; a receive layout with displacements is copied in too, so
// that its gaps come back as they were. Where this rank reads no sendbuf,
// SEND is RECV.
struct Staged {
  device::Staging staging;
  const void* send;
  void* recv;
  std::optional<size_t> send_at, recv_at;  // offsets into the area
  const void* send_in(uint8_t* area) const { return send_at ? area + *send_at : send; }
  void* recv_in(uint8_t* area) const { return recv_at ? area + *recv_at : recv; }
};

Staged plan_staging(const Call& call, const Prepared& p, const DeviceBuffers& on_device) {
  auto* send = static_cast<uint8_t*>(const_cast<void*>(p.send_bytes ? call.send : call.recv));
  auto* recv = static_cast<uint8_t*>(call.recv);
  Staged s{.send = send, .recv = recv};
  if (!on_device.accelerator) return s;
  const bool recv_on_device = p.recv_bytes && on_device.has(1);
  if (p.args.in_place && p.send_bytes && p.recv_bytes) {
    uint8_t* lo = std::min(send, recv);
    uint8_t* hi = std::max(send + p.send_bytes, recv + p.recv_bytes);
    const size_t at = s.staging.add(static_cast<size_t>(hi - lo));
    s.staging.in.push_back({lo, at, static_cast<size_t>(hi - lo)});
    s.staging.out.push_back({recv, at + static_cast<size_t>(recv - lo), p.recv_bytes});
    s.send_at = at + static_cast<size_t>(send - lo);
    s.recv_at = at + static_cast<size_t>(recv - lo);
    return s;
  }
  if (recv_on_device) {
    s.recv_at = s.staging.add(p.recv_bytes);
    if (p.args.recv_displs || p.args.in_place) s.staging.in.push_back({recv, *s.recv_at, p.recv_bytes});
    s.staging.out.push_back({recv, *s.recv_at, p.recv_bytes});
  }
  if (!p.send_bytes) {
    s.send_at = s.recv_at;
  } else if (on_device.has(0)) {
    s.send_at = s.staging.add(p.send_bytes);
    s.staging.in.push_back({send, *s.send_at, p.send_bytes});
  }
  return s;
}

// A blocking call on device buffers: inputs copied to the calling thread's
// staging memory, the call run on it, results copied back.
hcomm_result_t staged(comm::Communicator& c, const Prepared& p, const Staged& s, const device::Accelerator& accelerator,
                      const Completion& how) {
  auto* area = static_cast<uint8_t*>(accelerator.staging(s.staging.bytes, 0));
  for (const device::Staging::Copy& in : s.staging.in) accelerator.copy(area + in.offset, in.device, in.bytes);
  const hcomm_result_t rc = complete(c, c.start(p.args, s.send_in(area), s.recv_in(area)), how);
  for (const device::Staging::Copy& out : s.staging.out) accelerator.copy(out.device, area + out.offset, out.bytes);
  return rc;
}

// The count and displacement arrays a call's args point to.
std::array<const size_t**, 4> layout_fields(hcomm_coll_args_t& args) {
  return {&args.send_counts, &args.send_displs, &args.recv_counts, &args.recv_displs};
}

// Collectives whose elements travel apart (element i of the result needs
// element i of the inputs only), which a stream-ordered call runs in pieces.
bool elementwise(hcomm_coll_t coll) {
  return coll == HCOMM_COLL_ALLREDUCE || coll == HCOMM_COLL_BROADCAST || coll == HCOMM_COLL_REDUCE;
}

// A stream-ordered call, or a nonblocking one on device buffers (on the
// device's default stream): queued on the communicator's StreamOrder, in
// pieces of HCOMM_STAGING_CHUNK_BYTES where the collective is elementwise
// and a buffer is device memory, so that one piece's copies overlap
// another's transfers.
hcomm_result_t stream_ordered(const char* fn, comm::Communicator& c, const Call& call, const Prepared& whole,
                              const DeviceBuffers& on_device, std::shared_ptr<const device::UserOp> user_op,
                              const Completion& how) {
  comm::StreamOrder& order = c.stream_order(stream_accelerator(fn));
  const auto ticket = how.request ? std::make_shared<comm::StreamOrder::Ticket>() : nullptr;
  size_t piece = call.count;
  if (on_device.accelerator && elementwise(call.coll) && call.count)
    piece = std::clamp<size_t>(settings::get_size("HCOMM_STAGING_CHUNK_BYTES") / dtype_size(call.dtype), 1, call.count);
  const size_t pieces = piece < call.count ? (call.count + piece - 1) / piece : 1;
  std::vector<comm::StreamOrder::Piece> queued(pieces);
  for (size_t k = 0; k < pieces; ++k) {
    Call part = call;
    if (pieces > 1) {
      const size_t offset = k * piece * dtype_size(call.dtype);
      part.count = std::min(piece, call.count - k * piece);
      if (part.send) part.send = static_cast<const uint8_t*>(call.send) + offset;
      if (part.recv) part.recv = static_cast<uint8_t*>(call.recv) + offset;
    }
    const Prepared p = pieces > 1 ? prepare(part, c.size(), c.rank()) : whole;
    const Staged s = plan_staging(part, p, on_device);
    // The operation starts after the call returned, when the caller's count
    // and displacement arrays may be gone: it takes copies.
    std::shared_ptr<std::array<std::vector<size_t>, 4>> layout;
    hcomm_coll_args_t given = p.args;
    for (size_t i = 0; const size_t** field : layout_fields(given)) {
      if (*field) {
        if (!layout) layout = std::make_shared<std::array<std::vector<size_t>, 4>>();
        (*layout)[i].assign(*field, *field + c.size());
      }
      ++i;
    }
    queued[k].staging = s.staging;
    queued[k].start = [p, s, user_op, layout](comm::Communicator& comm, uint8_t* area) {
      hcomm_coll_args_t args = p.args;
      for (size_t i = 0; const size_t** field : layout_fields(args)) {
        if (*field) *field = (*layout)[i].data();
        ++i;
      }
      return comm.start(args, s.send_in(area), s.recv_in(area), user_op);
    };
  }
  order.enqueue(how.stream, std::move(queued), ticket);
  return complete(order, ticket, c, how);
}

hcomm_result_t collective(const char* fn, Call call, hcomm_comm_t comm, const Completion& how) {
  return c_boundary([&] {
    check_completion(fn, how);
    comm::Communicator& c = checked_comm(fn, comm);
    check_dtype(fn, call.dtype);
    const Shape shape = shape_of(call.coll);
    std::shared_ptr<const device::UserOp> user_op = shape.reduces ? check_op(fn, call.op, call.dtype) : nullptr;
    if (user_op) call.op = schedule_op(*user_op);
    HCOMM_ARG_CHECK(!shape.rank_order || call.op != HCOMM_AVG,
                    "%s: op is HCOMM_AVG, which has no prefix form (each rank would divide by another count); "
                    "pass HCOMM_SUM and divide the result by the number of ranks it covers",
                    fn);
    if (shape.rooted) check_rank(fn, "root", call.root, c);
    if (shape.variable)
      check_layouts(fn, call, c.size());
    else
      checked_bytes(fn, call.count, call.dtype, shape.per_rank_blocks ? c.size() : 1);
    const Prepared p = prepare(call, c.size(), c.rank());
    check_buffers(fn, call, p.send_bytes, p.recv_bytes, p.args.in_place, shape);
    const DeviceBuffers on_device = device_buffers(fn, how, {call.send, call.recv});
    if (user_op && on_device.accelerator)
      HCOMM_THROW(HCOMM_ERR_UNSUPPORTED,
                  "%s: a buffer is %s device memory, which user ops (they run on the host) do not reduce; pass "
                  "host buffers or a built-in op",
                  fn, on_device.accelerator->name());
    if (queued(how, on_device)) return stream_ordered(fn, c, call, p, on_device, std::move(user_op), how);
    const auto turn = c.host_turn();
    if (on_device.accelerator) return staged(c, p, plan_staging(call, p, on_device), *on_device.accelerator, how);
    // Where this rank reads no sendbuf, SEND resolves to RECV.
    return complete(c, c.start(p.args, p.send_bytes ? call.send : call.recv, call.recv, std::move(user_op)), how);
  });
}

}  // namespace
}  // namespace hcomm::api

using hcomm::api::blocking;
using hcomm::api::Call;
using hcomm::api::collective;
using hcomm::api::nonblocking;

extern "C" {

HCOMM_API hcomm_result_t hcomm_allreduce(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                         hcomm_op_t op, hcomm_comm_t comm, hcomm_stream_t stream) {
  Call call{.coll = HCOMM_COLL_ALLREDUCE, .send = sendbuf, .recv = recvbuf, .count = count, .dtype = dtype, .op = op};
  return collective("hcomm_allreduce", call, comm, blocking(stream));
}

HCOMM_API hcomm_result_t hcomm_iallreduce(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                          hcomm_op_t op, hcomm_comm_t comm, hcomm_request_t* request) {
  Call call{.coll = HCOMM_COLL_ALLREDUCE, .send = sendbuf, .recv = recvbuf, .count = count, .dtype = dtype, .op = op};
  return collective("hcomm_iallreduce", call, comm, nonblocking(request));
}

HCOMM_API hcomm_result_t hcomm_broadcast(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                         int root, hcomm_comm_t comm, hcomm_stream_t stream) {
  Call call{.coll = HCOMM_COLL_BROADCAST, .send = sendbuf, .recv = recvbuf, .count = count, .dtype = dtype, .root = root};
  return collective("hcomm_broadcast", call, comm, blocking(stream));
}

HCOMM_API hcomm_result_t hcomm_ibroadcast(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                          int root, hcomm_comm_t comm, hcomm_request_t* request) {
  Call call{.coll = HCOMM_COLL_BROADCAST, .send = sendbuf, .recv = recvbuf, .count = count, .dtype = dtype, .root = root};
  return collective("hcomm_ibroadcast", call, comm, nonblocking(request));
}

HCOMM_API hcomm_result_t hcomm_barrier(hcomm_comm_t comm, hcomm_stream_t stream) {
  return collective("hcomm_barrier", Call{.coll = HCOMM_COLL_BARRIER}, comm, blocking(stream));
}

HCOMM_API hcomm_result_t hcomm_ibarrier(hcomm_comm_t comm, hcomm_request_t* request) {
  return collective("hcomm_ibarrier", Call{.coll = HCOMM_COLL_BARRIER}, comm, nonblocking(request));
}

HCOMM_API hcomm_result_t hcomm_reduce(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                      hcomm_op_t op, int root, hcomm_comm_t comm, hcomm_stream_t stream) {
  Call call{.coll = HCOMM_COLL_REDUCE, .send = sendbuf, .recv = recvbuf, .count = count, .dtype = dtype, .op = op,
            .root = root};
  return collective("hcomm_reduce", call, comm, blocking(stream));
}

HCOMM_API hcomm_result_t hcomm_ireduce(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                       hcomm_op_t op, int root, hcomm_comm_t comm, hcomm_request_t* request) {
  Call call{.coll = HCOMM_COLL_REDUCE, .send = sendbuf, .recv = recvbuf, .count = count, .dtype = dtype, .op = op,
            .root = root};
  return collective("hcomm_ireduce", call, comm, nonblocking(request));
}

HCOMM_API hcomm_result_t hcomm_allgather(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                         hcomm_comm_t comm, hcomm_stream_t stream) {
  Call call{.coll = HCOMM_COLL_ALLGATHER, .send = sendbuf, .recv = recvbuf, .count = count, .dtype = dtype};
  return collective("hcomm_allgather", call, comm, blocking(stream));
}

HCOMM_API hcomm_result_t hcomm_iallgather(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                          hcomm_comm_t comm, hcomm_request_t* request) {
  Call call{.coll = HCOMM_COLL_ALLGATHER, .send = sendbuf, .recv = recvbuf, .count = count, .dtype = dtype};
  return collective("hcomm_iallgather", call, comm, nonblocking(request));
}

HCOMM_API hcomm_result_t hcomm_allgatherv(const void* sendbuf, void* recvbuf, const size_t* recvcounts,
                                          const size_t* displs, hcomm_dtype_t dtype, hcomm_comm_t comm,
                                          hcomm_stream_t stream) {
  Call call{.coll = HCOMM_COLL_ALLGATHERV, .send = sendbuf, .recv = recvbuf, .dtype = dtype,
            .recv_counts = recvcounts, .recv_displs = displs};
  return collective("hcomm_allgatherv", call, comm, blocking(stream));
}

HCOMM_API hcomm_result_t hcomm_iallgatherv(const void* sendbuf, void* recvbuf, const size_t* recvcounts,
                                           const size_t* displs, hcomm_dtype_t dtype, hcomm_comm_t comm,
                                           hcomm_request_t* request) {
  Call call{.coll = HCOMM_COLL_ALLGATHERV, .send = sendbuf, .recv = recvbuf, .dtype = dtype,
            .recv_counts = recvcounts, .recv_displs = displs};
  return collective("hcomm_iallgatherv", call, comm, nonblocking(request));
}

HCOMM_API hcomm_result_t hcomm_reduce_scatter(const void* sendbuf, void* recvbuf, size_t recvcount,
                                              hcomm_dtype_t dtype, hcomm_op_t op, hcomm_comm_t comm,
                                              hcomm_stream_t stream) {
  Call call{.coll = HCOMM_COLL_REDUCE_SCATTER, .send = sendbuf, .recv = recvbuf, .count = recvcount, .dtype = dtype,
            .op = op};
  return collective("hcomm_reduce_scatter", call, comm, blocking(stream));
}

HCOMM_API hcomm_result_t hcomm_ireduce_scatter(const void* sendbuf, void* recvbuf, size_t recvcount,
                                               hcomm_dtype_t dtype, hcomm_op_t op, hcomm_comm_t comm,
                                               hcomm_request_t* request) {
  Call call{.coll = HCOMM_COLL_REDUCE_SCATTER, .send = sendbuf, .recv = recvbuf, .count = recvcount, .dtype = dtype,
            .op = op};
  return collective("hcomm_ireduce_scatter", call, comm, nonblocking(request));
}

HCOMM_API hcomm_result_t hcomm_reduce_scatter_v(const void* sendbuf, void* recvbuf, const size_t* recvcounts,
                                                hcomm_dtype_t dtype, hcomm_op_t op, hcomm_comm_t comm,
                                                hcomm_stream_t stream) {
  Call call{.coll = HCOMM_COLL_REDUCE_SCATTER_V, .send = sendbuf, .recv = recvbuf, .dtype = dtype, .op = op,
            .recv_counts = recvcounts};
  return collective("hcomm_reduce_scatter_v", call, comm, blocking(stream));
}

HCOMM_API hcomm_result_t hcomm_ireduce_scatter_v(const void* sendbuf, void* recvbuf, const size_t* recvcounts,
                                                 hcomm_dtype_t dtype, hcomm_op_t op, hcomm_comm_t comm,
                                                 hcomm_request_t* request) {
  Call call{.coll = HCOMM_COLL_REDUCE_SCATTER_V, .send = sendbuf, .recv = recvbuf, .dtype = dtype, .op = op,
            .recv_counts = recvcounts};
  return collective("hcomm_ireduce_scatter_v", call, comm, nonblocking(request));
}

HCOMM_API hcomm_result_t hcomm_alltoall(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                        hcomm_comm_t comm, hcomm_stream_t stream) {
  Call call{.coll = HCOMM_COLL_ALLTOALL, .send = sendbuf, .recv = recvbuf, .count = count, .dtype = dtype};
  return collective("hcomm_alltoall", call, comm, blocking(stream));
}

HCOMM_API hcomm_result_t hcomm_ialltoall(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                         hcomm_comm_t comm, hcomm_request_t* request) {
  Call call{.coll = HCOMM_COLL_ALLTOALL, .send = sendbuf, .recv = recvbuf, .count = count, .dtype = dtype};
  return collective("hcomm_ialltoall", call, comm, nonblocking(request));
}

HCOMM_API hcomm_result_t hcomm_alltoallv(const void* sendbuf, const size_t* sendcounts, const size_t* sdispls,
                                         void* recvbuf, const size_t* recvcounts, const size_t* rdispls,
                                         hcomm_dtype_t dtype, hcomm_comm_t comm, hcomm_stream_t stream) {
  Call call{.coll = HCOMM_COLL_ALLTOALLV, .send = sendbuf, .recv = recvbuf, .dtype = dtype,
            .send_counts = sendcounts, .send_displs = sdispls, .recv_counts = recvcounts, .recv_displs = rdispls};
  return collective("hcomm_alltoallv", call, comm, blocking(stream));
}

HCOMM_API hcomm_result_t hcomm_ialltoallv(const void* sendbuf, const size_t* sendcounts, const size_t* sdispls,
                                          void* recvbuf, const size_t* recvcounts, const size_t* rdispls,
                                          hcomm_dtype_t dtype, hcomm_comm_t comm, hcomm_request_t* request) {
  Call call{.coll = HCOMM_COLL_ALLTOALLV, .send = sendbuf, .recv = recvbuf, .dtype = dtype,
            .send_counts = sendcounts, .send_displs = sdispls, .recv_counts = recvcounts, .recv_displs = rdispls};
  return collective("hcomm_ialltoallv", call, comm, nonblocking(request));
}

HCOMM_API hcomm_result_t hcomm_gather(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype, int root,
                                      hcomm_comm_t comm, hcomm_stream_t stream) {
  Call call{.coll = HCOMM_COLL_GATHER, .send = sendbuf, .recv = recvbuf, .count = count, .dtype = dtype, .root = root};
  return collective("hcomm_gather", call, comm, blocking(stream));
}

HCOMM_API hcomm_result_t hcomm_igather(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                       int root, hcomm_comm_t comm, hcomm_request_t* request) {
  Call call{.coll = HCOMM_COLL_GATHER, .send = sendbuf, .recv = recvbuf, .count = count, .dtype = dtype, .root = root};
  return collective("hcomm_igather", call, comm, nonblocking(request));
}

HCOMM_API hcomm_result_t hcomm_scatter(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                       int root, hcomm_comm_t comm, hcomm_stream_t stream) {
  Call call{.coll = HCOMM_COLL_SCATTER, .send = sendbuf, .recv = recvbuf, .count = count, .dtype = dtype, .root = root};
  return collective("hcomm_scatter", call, comm, blocking(stream));
}

HCOMM_API hcomm_result_t hcomm_iscatter(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                        int root, hcomm_comm_t comm, hcomm_request_t* request) {
  Call call{.coll = HCOMM_COLL_SCATTER, .send = sendbuf, .recv = recvbuf, .count = count, .dtype = dtype, .root = root};
  return collective("hcomm_iscatter", call, comm, nonblocking(request));
}

HCOMM_API hcomm_result_t hcomm_scan(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                    hcomm_op_t op, hcomm_comm_t comm, hcomm_stream_t stream) {
  Call call{.coll = HCOMM_COLL_SCAN, .send = sendbuf, .recv = recvbuf, .count = count, .dtype = dtype, .op = op};
  return collective("hcomm_scan", call, comm, blocking(stream));
}

HCOMM_API hcomm_result_t hcomm_iscan(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                     hcomm_op_t op, hcomm_comm_t comm, hcomm_request_t* request) {
  Call call{.coll = HCOMM_COLL_SCAN, .send = sendbuf, .recv = recvbuf, .count = count, .dtype = dtype, .op = op};
  return collective("hcomm_iscan", call, comm, nonblocking(request));
}

HCOMM_API hcomm_result_t hcomm_exscan(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                      hcomm_op_t op, hcomm_comm_t comm, hcomm_stream_t stream) {
  Call call{.coll = HCOMM_COLL_EXSCAN, .send = sendbuf, .recv = recvbuf, .count = count, .dtype = dtype, .op = op};
  return collective("hcomm_exscan", call, comm, blocking(stream));
}

HCOMM_API hcomm_result_t hcomm_iexscan(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                       hcomm_op_t op, hcomm_comm_t comm, hcomm_request_t* request) {
  Call call{.coll = HCOMM_COLL_EXSCAN, .send = sendbuf, .recv = recvbuf, .count = count, .dtype = dtype, .op = op};
  return collective("hcomm_iexscan", call, comm, nonblocking(request));
}

}  // extern "C"
