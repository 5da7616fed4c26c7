// The C API: argument validation (a clear error naming the argument), then
// the communicator. Exceptions never cross this boundary.
#include <cstring>
#include <memory>

#include "core/algorithm/tune.hpp"
#include "core/api/handles.hpp"
#include "core/bootstrap/bootstrap.hpp"
#include "core/comm/communicator.hpp"
#include "core/common/error.hpp"
#include "core/common/settings.hpp"
#include "core/plugin/loader.hpp"
#include "hcomm/hcomm.h"


namespace hcomm {
namespace {

constexpr size_t kDtypeSizes[HCOMM_NUM_DTYPES] = {1, 1, 4, 4, 8, 8, 2, 2, 4, 8};
constexpr const char* kDtypeNames[HCOMM_NUM_DTYPES] = {"int8",    "uint8",   "int32",    "uint32",  "int64",
                                                       "uint64",  "float16", "bfloat16", "float32", "float64"};
constexpr const char* kOpNames[HCOMM_NUM_OPS] = {"sum", "prod", "min", "max", "avg"};

#define HCOMM_ARG_CHECK(cond, ...) \
  do {                             \
    if (!(cond)) HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT, __VA_ARGS__); \
  } while (0)

// Plugins and settings are read before the first communicator; a bad setting
// fails here, naming the variable.
void prepare_process() {
  plugin::discovered();
  settings::validate();
}

comm::Communicator& checked_comm(const char* fn, hcomm_comm_t comm) {
  HCOMM_ARG_CHECK(comm && comm->impl, "%s: comm is NULL (create one with hcomm_comm_init_rank or hcomm_comm_init_env)",
                  fn);
  return *comm->impl;
}

void check_dtype(const char* fn, hcomm_dtype_t dtype) {
  HCOMM_ARG_CHECK(static_cast<unsigned>(dtype) < HCOMM_NUM_DTYPES,
                  "%s: dtype %d is not an hcomm_dtype_t (HCOMM_INT8=0 .. HCOMM_FLOAT64=9)", fn, static_cast<int>(dtype));
}

void check_stream(const char* fn, hcomm_stream_t stream) {
  if (stream)
    HCOMM_THROW(HCOMM_ERR_UNSUPPORTED,
                "%s: stream-ordered calls need the CUDA device plugin, which is not loaded; pass a NULL stream for "
                "host-ordered execution",
                fn);
}

// A message's byte size, checking that it fits.
size_t checked_bytes(const char* fn, size_t count, hcomm_dtype_t dtype) {
  size_t es = kDtypeSizes[dtype];
  HCOMM_ARG_CHECK(count <= (SIZE_MAX >> 1) / es, "%s: count %zu of %s overflows the byte size; split the call", fn,
                  count, kDtypeNames[dtype]);
  return count * es;
}

void check_buffers(const char* fn, const void* send, const void* recv, size_t bytes, bool need_send) {
  if (bytes == 0) return;
  HCOMM_ARG_CHECK(!need_send || send, "%s: sendbuf is NULL but count is not 0", fn);
  HCOMM_ARG_CHECK(recv, "%s: recvbuf is NULL but count is not 0", fn);
  if (need_send && send != recv) {
    auto s = reinterpret_cast<uintptr_t>(send), r = reinterpret_cast<uintptr_t>(recv);
    HCOMM_ARG_CHECK(s + bytes <= r || r + bytes <= s,
                    "%s: sendbuf and recvbuf overlap without being equal (for in place, pass the same pointer twice)",
                    fn);
  }
}

hcomm_coll_args_t make_args(hcomm_coll_t coll, size_t count, hcomm_dtype_t dtype, hcomm_op_t op, int root,
                            bool in_place) {
  return hcomm_coll_args_t{.size = sizeof(hcomm_coll_args_t),
                           .coll = coll,
                           .count = count,
                           .dtype = dtype,
                           .dtype_size = kDtypeSizes[dtype],
                           .op = op,
                           .root = root,
                           .in_place = in_place ? 1 : 0,
                           .mem_kind = HCOMM_MEM_HOST};
}

// Runs a validated call: blocking when request is NULL, else hands one back.
hcomm_result_t launch(comm::Communicator& c, const hcomm_coll_args_t& args, const void* send, void* recv,
                      hcomm_request_t* request) {
  exec::Operation* op = c.start(args, send, recv);
  if (!request) {
    c.wait(op);
  } else {
    *request = new hcomm_request{&c, op};
  }
  return HCOMM_SUCCESS;
}

// How a call completes: a blocking form may name a stream, a nonblocking form
// hands back a request.
struct Completion {
  hcomm_stream_t stream;
  hcomm_request_t* request;
  bool nonblocking;
};
constexpr Completion blocking(hcomm_stream_t stream) { return {stream, nullptr, false}; }
constexpr Completion nonblocking(hcomm_request_t* request) { return {nullptr, request, true}; }

void check_completion(const char* fn, const Completion& how) {
  check_stream(fn, how.stream);
  HCOMM_ARG_CHECK(!how.nonblocking || how.request, "%s: request is NULL", fn);
  if (how.request) *how.request = nullptr;
}

hcomm_result_t allreduce(const char* fn, const void* send, void* recv, size_t count, hcomm_dtype_t dtype,
                         hcomm_op_t op, hcomm_comm_t comm, const Completion& how) {
  return c_boundary([&] {
    check_completion(fn, how);
    comm::Communicator& c = checked_comm(fn, comm);
    check_dtype(fn, dtype);
    HCOMM_ARG_CHECK(static_cast<unsigned>(op) < HCOMM_NUM_OPS,
                    "%s: op %d is not an hcomm_op_t (HCOMM_SUM=0 .. HCOMM_AVG=4)", fn, static_cast<int>(op));
    check_buffers(fn, send, recv, checked_bytes(fn, count, dtype), true);
    return launch(c, make_args(HCOMM_COLL_ALLREDUCE, count, dtype, op, 0, send == recv), send, recv, how.request);
  });
}

hcomm_result_t broadcast(const char* fn, const void* send, void* recv, size_t count, hcomm_dtype_t dtype, int root,
                         hcomm_comm_t comm, const Completion& how) {
  return c_boundary([&] {
    check_completion(fn, how);
    comm::Communicator& c = checked_comm(fn, comm);
    check_dtype(fn, dtype);
    HCOMM_ARG_CHECK(root >= 0 && root < c.size(), "%s: root %d is not a rank of this communicator (0..%d)", fn, root,
                    c.size() - 1);
    bool is_root = root == c.rank();
    check_buffers(fn, send, recv, checked_bytes(fn, count, dtype), is_root);
    return launch(c, make_args(HCOMM_COLL_BROADCAST, count, dtype, HCOMM_SUM, root, !is_root || send == recv), send,
                  recv, how.request);
  });
}

hcomm_result_t barrier(const char* fn, hcomm_comm_t comm, const Completion& how) {
  return c_boundary([&] {
    check_completion(fn, how);
    comm::Communicator& c = checked_comm(fn, comm);
    return launch(c, make_args(HCOMM_COLL_BARRIER, 0, HCOMM_UINT8, HCOMM_SUM, 0, true), nullptr, nullptr, how.request);
  });
}

}  // namespace
}  // namespace hcomm

using namespace hcomm;

extern "C" {

HCOMM_API const char* hcomm_get_last_error(void) { return last_error(); }

HCOMM_API const char* hcomm_result_string(hcomm_result_t result) {
  switch (result) {
    case HCOMM_SUCCESS: return "success";
    case HCOMM_ERR_INVALID_ARGUMENT: return "invalid argument";
    case HCOMM_ERR_UNSUPPORTED: return "unsupported";
    case HCOMM_ERR_SYSTEM: return "system error";
    case HCOMM_ERR_TIMEOUT: return "timeout";
    case HCOMM_ERR_REMOTE: return "remote failure";
    case HCOMM_ERR_PLUGIN: return "plugin error";
    case HCOMM_ERR_INTERNAL: return "internal error";
    case HCOMM_ERR_CONFIG: return "configuration error";
    case HCOMM_IN_PROGRESS: return "in progress";
  }
  return "unknown result";
}

HCOMM_API const char* hcomm_dtype_name(hcomm_dtype_t dtype) {
  return static_cast<unsigned>(dtype) < HCOMM_NUM_DTYPES ? kDtypeNames[dtype] : "unknown";
}

HCOMM_API const char* hcomm_op_name(hcomm_op_t op) {
  return static_cast<unsigned>(op) < HCOMM_NUM_OPS ? kOpNames[op] : "unknown";
}

HCOMM_API size_t hcomm_dtype_size(hcomm_dtype_t dtype) {
  return static_cast<unsigned>(dtype) < HCOMM_NUM_DTYPES ? kDtypeSizes[dtype] : 0;
}

HCOMM_API hcomm_result_t hcomm_get_unique_id(hcomm_unique_id_t* id) {
  return c_boundary([&] {
    HCOMM_ARG_CHECK(id, "hcomm_get_unique_id: id is NULL");
    prepare_process();
    bootstrap::Bootstrap::make_unique_id(id);
    return HCOMM_SUCCESS;
  });
}

HCOMM_API hcomm_result_t hcomm_comm_init_rank(hcomm_comm_t* comm, const hcomm_unique_id_t* id, int nranks, int rank) {
  return c_boundary([&] {
    HCOMM_ARG_CHECK(comm, "hcomm_comm_init_rank: comm is NULL");
    *comm = nullptr;
    HCOMM_ARG_CHECK(id, "hcomm_comm_init_rank: id is NULL (make one with hcomm_get_unique_id)");
    HCOMM_ARG_CHECK(nranks >= 1, "hcomm_comm_init_rank: nranks is %d, must be at least 1", nranks);
    HCOMM_ARG_CHECK(rank >= 0 && rank < nranks, "hcomm_comm_init_rank: rank %d is outside 0..%d", rank, nranks - 1);
    prepare_process();
    auto c = std::make_unique<hcomm_comm>();
    c->impl = std::make_unique<comm::Communicator>(bootstrap::Bootstrap::from_unique_id(*id, nranks, rank));
    *comm = c.release();
    return HCOMM_SUCCESS;
  });
}

HCOMM_API hcomm_result_t hcomm_comm_init_env(hcomm_comm_t* comm) {
  return c_boundary([&] {
    HCOMM_ARG_CHECK(comm, "hcomm_comm_init_env: comm is NULL");
    *comm = nullptr;
    prepare_process();
    auto c = std::make_unique<hcomm_comm>();
    c->impl = std::make_unique<comm::Communicator>(bootstrap::Bootstrap::from_env());
    *comm = c.release();
    return HCOMM_SUCCESS;
  });
}

HCOMM_API hcomm_result_t hcomm_comm_destroy(hcomm_comm_t comm) {
  return c_boundary([&] {
    HCOMM_ARG_CHECK(comm, "hcomm_comm_destroy: comm is NULL");
    delete comm;
    return HCOMM_SUCCESS;
  });
}

HCOMM_API hcomm_result_t hcomm_comm_rank(hcomm_comm_t comm, int* rank) {
  return c_boundary([&] {
    comm::Communicator& c = checked_comm("hcomm_comm_rank", comm);
    HCOMM_ARG_CHECK(rank, "hcomm_comm_rank: rank is NULL");
    *rank = c.rank();
    return HCOMM_SUCCESS;
  });
}

HCOMM_API hcomm_result_t hcomm_comm_size(hcomm_comm_t comm, int* size) {
  return c_boundary([&] {
    comm::Communicator& c = checked_comm("hcomm_comm_size", comm);
    HCOMM_ARG_CHECK(size, "hcomm_comm_size: size is NULL");
    *size = c.size();
    return HCOMM_SUCCESS;
  });
}

HCOMM_API hcomm_result_t hcomm_allreduce(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                         hcomm_op_t op, hcomm_comm_t comm, hcomm_stream_t stream) {
  return allreduce("hcomm_allreduce", sendbuf, recvbuf, count, dtype, op, comm, blocking(stream));
}

HCOMM_API hcomm_result_t hcomm_iallreduce(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                          hcomm_op_t op, hcomm_comm_t comm, hcomm_request_t* request) {
  return allreduce("hcomm_iallreduce", sendbuf, recvbuf, count, dtype, op, comm, nonblocking(request));
}

HCOMM_API hcomm_result_t hcomm_broadcast(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                         int root, hcomm_comm_t comm, hcomm_stream_t stream) {
  return broadcast("hcomm_broadcast", sendbuf, recvbuf, count, dtype, root, comm, blocking(stream));
}

HCOMM_API hcomm_result_t hcomm_ibroadcast(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                          int root, hcomm_comm_t comm, hcomm_request_t* request) {
  return broadcast("hcomm_ibroadcast", sendbuf, recvbuf, count, dtype, root, comm, nonblocking(request));
}

HCOMM_API hcomm_result_t hcomm_barrier(hcomm_comm_t comm, hcomm_stream_t stream) {
  return barrier("hcomm_barrier", comm, blocking(stream));
}

HCOMM_API hcomm_result_t hcomm_ibarrier(hcomm_comm_t comm, hcomm_request_t* request) {
  return barrier("hcomm_ibarrier", comm, nonblocking(request));
}

HCOMM_API hcomm_result_t hcomm_test(hcomm_request_t request, int* done) {
  return c_boundary([&] {
    HCOMM_ARG_CHECK(request, "hcomm_test: request is NULL");
    HCOMM_ARG_CHECK(done, "hcomm_test: done is NULL");
    std::unique_ptr<hcomm_request> owned(request);
    *done = owned->comm->test(owned->op) ? 1 : 0;
    if (!*done) owned.release();  // still running: the caller keeps it
    return HCOMM_SUCCESS;
  });
}

HCOMM_API hcomm_result_t hcomm_wait(hcomm_request_t request) {
  return c_boundary([&] {
    HCOMM_ARG_CHECK(request, "hcomm_wait: request is NULL");
    std::unique_ptr<hcomm_request> owned(request);
    owned->comm->wait(owned->op);
    return HCOMM_SUCCESS;
  });
}

}  // extern "C"
