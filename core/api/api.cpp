// The C API outside the calls that move data: names, communicators,
// requests and the choice of algorithm. Exceptions never cross this boundary.
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "core/api/checks.hpp"
#include "core/bootstrap/bootstrap.hpp"
#include "core/comm/communicator.hpp"
#include "core/common/error.hpp"
#include "core/common/log.hpp"
#include "core/common/names.hpp"
#include "core/common/settings.hpp"
#include "core/plugin/loader.hpp"
#include "hcomm/hcomm.h"

namespace hcomm::api {
namespace {

// Plugins and settings are read before the first communicator; a bad setting
// fails here, naming the variable. The first call logs the library's version,
// before anything that may fail, so that every log says which HComm ran.
void prepare_process() {
  static std::once_flag announced;
  std::call_once(announced, [] {
    HCOMM_INFO(INIT, "HComm %s (plugin ABI %d.%d)", HCOMM_VERSION_STRING, HCOMM_PLUGIN_ABI_MAJOR,
               HCOMM_PLUGIN_ABI_MINOR);
  });
  plugin::discovered();
  settings::validate();
}

void check_coll(const char* fn, hcomm_coll_t coll) {
  HCOMM_ARG_CHECK(static_cast<unsigned>(coll) < HCOMM_NUM_COLLS && coll != HCOMM_COLL_SENDRECV,
                  "%s: coll %d is not a collective (HCOMM_COLL_ALLREDUCE=0 .. HCOMM_COLL_EXSCAN=14, "
                  "HCOMM_COLL_SENDRECV excepted: point to point has no algorithm to choose)",
                  fn, static_cast<int>(coll));
}

// The C handle of a communicator; NULL for none (a split's HCOMM_SPLIT_NOCOLOR).
hcomm_comm_t handle_of(std::unique_ptr<comm::Communicator> impl) {
  if (!impl) return nullptr;
  auto handle = std::make_unique<hcomm_comm>();
  handle->impl = std::move(impl);
  return handle.release();
}

hcomm_result_t init_rank(const char* fn, hcomm_comm_t* comm, const hcomm_unique_id_t* id, int nranks, int rank,
                         const hcomm_config_t* config) {
  return c_boundary([&] {
    HCOMM_ARG_CHECK(comm, "%s: comm is NULL", fn);
    *comm = nullptr;
    HCOMM_ARG_CHECK(id, "%s: id is NULL (make one with hcomm_get_unique_id)", fn);
    HCOMM_ARG_CHECK(nranks >= 1, "%s: nranks is %d, must be at least 1", fn, nranks);
    HCOMM_ARG_CHECK(rank >= 0 && rank < nranks, "%s: rank %d is outside 0..%d", fn, rank, nranks - 1);
    prepare_process();
    *comm = handle_of(std::make_unique<comm::Communicator>(bootstrap::Bootstrap::from_unique_id(*id, nranks, rank),
                                                           comm::Config::resolve(config)));
    return HCOMM_SUCCESS;
  });
}

hcomm_result_t init_env(const char* fn, hcomm_comm_t* comm, const hcomm_config_t* config) {
  return c_boundary([&] {
    HCOMM_ARG_CHECK(comm, "%s: comm is NULL", fn);
    *comm = nullptr;
    prepare_process();
    *comm = handle_of(
        std::make_unique<comm::Communicator>(bootstrap::Bootstrap::from_env(), comm::Config::resolve(config)));
    return HCOMM_SUCCESS;
  });
}

// hcomm_comm_split, and hcomm_comm_dup as a split into one colour keyed by
// rank (key nullopt); config NULL keeps comm's settings.
hcomm_result_t split(const char* fn, hcomm_comm_t comm, int color, std::optional<int> key, const hcomm_config_t* config,
                     hcomm_comm_t* newcomm) {
  return c_boundary([&] {
    HCOMM_ARG_CHECK(newcomm, "%s: newcomm is NULL", fn);
    *newcomm = nullptr;
    comm::Communicator& c = checked_comm(fn, comm);
    const auto turn = c.host_turn();
    HCOMM_ARG_CHECK(color >= 0 || color == HCOMM_SPLIT_NOCOLOR,
                    "%s: color is %d; pass a color of 0 or more, or HCOMM_SPLIT_NOCOLOR (-1)", fn, color);
    *newcomm = handle_of(
        c.split(color, key.value_or(c.rank()), config ? comm::Config::resolve(config, &c.config()) : c.config()));
    return HCOMM_SUCCESS;
  });
}

hcomm_result_t create_group(hcomm_comm_t comm, int nranks, const int* ranks, int tag, const hcomm_config_t* config,
                            hcomm_comm_t* newcomm) {
  constexpr const char* fn = "hcomm_comm_create_group";
  return c_boundary([&] {
    HCOMM_ARG_CHECK(newcomm, "%s: newcomm is NULL", fn);
    *newcomm = nullptr;
    comm::Communicator& c = checked_comm(fn, comm);
    const auto turn = c.host_turn();
    HCOMM_ARG_CHECK(nranks >= 1 && nranks <= c.size(), "%s: nranks is %d; give 1 to the communicator's size (%d)", fn,
                    nranks, c.size());
    HCOMM_ARG_CHECK(ranks, "%s: ranks is NULL; give the group's %d ranks in comm", fn, nranks);
    HCOMM_ARG_CHECK(tag >= 0, "%s: tag is %d; give 0 to HCOMM_TAG_MAX", fn, tag);
    std::vector<int> members(ranks, ranks + nranks);
    std::vector<uint8_t> seen(c.size(), 0);
    for (int i = 0; i < nranks; ++i) {
      HCOMM_ARG_CHECK(members[i] >= 0 && members[i] < c.size(), "%s: ranks[%d] is %d; give ranks of comm (0 to %d)",
                      fn, i, members[i], c.size() - 1);
      HCOMM_ARG_CHECK(!seen[members[i]], "%s: ranks[%d] is %d, which ranks lists twice; give each rank once", fn, i,
                      members[i]);
      seen[members[i]] = 1;
    }
    HCOMM_ARG_CHECK(seen[c.rank()], "%s: this rank (%d) is not among ranks; only the group's ranks call it", fn,
                    c.rank());
    *newcomm =
        handle_of(c.create_group(members, tag, config ? comm::Config::resolve(config, &c.config()) : c.config()));
    return HCOMM_SUCCESS;
  });
}

// hcomm_test and hcomm_test_status; the request is freed once done or failed.
hcomm_result_t test(hcomm_request_t request, int* done, hcomm_status_t* status, const char* fn) {
  return c_boundary([&] {
    HCOMM_ARG_CHECK(request, "%s: request is NULL", fn);
    HCOMM_ARG_CHECK(done, "%s: done is NULL", fn);
    std::unique_ptr<hcomm_request> owned(request);
    if (owned->ticket) {  // its calls are the communicator's thread's: no turn needed
      const bool finished = owned->order->finished(*owned->ticket, false);
      if (finished && status) *status = owned->ticket->status;
      *done = finished ? 1 : 0;
      if (!finished) owned.release();
      return HCOMM_SUCCESS;
    }
    const auto turn = owned->comm->host_turn();
    const bool finished =
        owned->message ? owned->comm->test(owned->message, status) : owned->comm->test(owned->op, status);
    *done = finished ? 1 : 0;
    if (!finished) owned.release();  // still running: the caller keeps it
    return HCOMM_SUCCESS;
  });
}

// hcomm_wait and hcomm_wait_status; the request is freed.
hcomm_result_t wait(hcomm_request_t request, hcomm_status_t* status, const char* fn) {
  return c_boundary([&] {
    HCOMM_ARG_CHECK(request, "%s: request is NULL", fn);
    std::unique_ptr<hcomm_request> owned(request);
    if (owned->ticket) {
      owned->order->finished(*owned->ticket, true);
      if (status) *status = owned->ticket->status;
      return HCOMM_SUCCESS;
    }
    const auto turn = owned->comm->host_turn();
    if (owned->message)
      owned->comm->wait(owned->message, status);
    else
      owned->comm->wait(owned->op, status);
    return HCOMM_SUCCESS;
  });
}

}  // namespace
}  // namespace hcomm::api

using namespace hcomm;
using namespace hcomm::api;

extern "C" {

HCOMM_API hcomm_result_t hcomm_get_version(int* version) {
  return c_boundary([&] {
    HCOMM_ARG_CHECK(version, "hcomm_get_version: version is NULL");
    *version = HCOMM_VERSION_CODE;
    return HCOMM_SUCCESS;
  });
}

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
    case HCOMM_ERR_TRUNCATED: return "message truncated";
  }
  return "unknown result";
}

HCOMM_API const char* hcomm_dtype_name(hcomm_dtype_t dtype) { return dtype_name(dtype); }

HCOMM_API const char* hcomm_op_name(hcomm_op_t op) { return op_name(op); }

HCOMM_API size_t hcomm_dtype_size(hcomm_dtype_t dtype) { return dtype_size(dtype); }

HCOMM_API hcomm_result_t hcomm_get_unique_id(hcomm_unique_id_t* id) {
  return c_boundary([&] {
    HCOMM_ARG_CHECK(id, "hcomm_get_unique_id: id is NULL");
    prepare_process();
    bootstrap::Bootstrap::make_unique_id(id);
    return HCOMM_SUCCESS;
  });
}

HCOMM_API hcomm_result_t hcomm_comm_init_rank(hcomm_comm_t* comm, const hcomm_unique_id_t* id, int nranks, int rank) {
  return init_rank("hcomm_comm_init_rank", comm, id, nranks, rank, nullptr);
}

HCOMM_API hcomm_result_t hcomm_comm_init_rank_config(hcomm_comm_t* comm, const hcomm_unique_id_t* id, int nranks,
                                                     int rank, const hcomm_config_t* config) {
  return init_rank("hcomm_comm_init_rank_config", comm, id, nranks, rank, config);
}

HCOMM_API hcomm_result_t hcomm_comm_init_env(hcomm_comm_t* comm) {
  return init_env("hcomm_comm_init_env", comm, nullptr);
}

HCOMM_API hcomm_result_t hcomm_comm_init_env_config(hcomm_comm_t* comm, const hcomm_config_t* config) {
  return init_env("hcomm_comm_init_env_config", comm, config);
}

HCOMM_API hcomm_result_t hcomm_comm_split(hcomm_comm_t comm, int color, int key, const hcomm_config_t* config,
                                          hcomm_comm_t* newcomm) {
  return split("hcomm_comm_split", comm, color, key, config, newcomm);
}

HCOMM_API hcomm_result_t hcomm_comm_dup(hcomm_comm_t comm, hcomm_comm_t* newcomm) {
  return split("hcomm_comm_dup", comm, 0, std::nullopt, nullptr, newcomm);
}

HCOMM_API hcomm_result_t hcomm_comm_create_group(hcomm_comm_t comm, int nranks, const int* ranks, int tag,
                                                 const hcomm_config_t* config, hcomm_comm_t* newcomm) {
  return create_group(comm, nranks, ranks, tag, config, newcomm);
}

HCOMM_API hcomm_result_t hcomm_comm_destroy(hcomm_comm_t comm) {
  return c_boundary([&] {
    HCOMM_ARG_CHECK(comm, "hcomm_comm_destroy: comm is NULL");
    delete comm;
    return HCOMM_SUCCESS;
  });
}

HCOMM_API hcomm_result_t hcomm_comm_get_async_error(hcomm_comm_t comm, hcomm_result_t* error) {
  return c_boundary([&] {
    comm::Communicator& c = checked_comm("hcomm_comm_get_async_error", comm);
    HCOMM_ARG_CHECK(error, "hcomm_comm_get_async_error: error is NULL");
    std::string text;
    *error = c.stream_error(&text);
    if (*error != HCOMM_SUCCESS) set_last_error(text);
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

HCOMM_API hcomm_result_t hcomm_comm_topology(hcomm_comm_t comm, const char** json) {
  return c_boundary([&] {
    HCOMM_ARG_CHECK(json, "hcomm_comm_topology: json is NULL");
    *json = nullptr;
    comm::Communicator& c = checked_comm("hcomm_comm_topology", comm);
    const auto turn = c.host_turn();
    *json = c.topology_json().c_str();
    return HCOMM_SUCCESS;
  });
}

HCOMM_API hcomm_result_t hcomm_comm_force_algorithm(hcomm_comm_t comm, hcomm_coll_t coll, const char* algorithm) {
  return c_boundary([&] {
    comm::Communicator& c = checked_comm("hcomm_comm_force_algorithm", comm);
    const auto turn = c.host_turn();
    check_coll("hcomm_comm_force_algorithm", coll);
    c.force_algorithm(coll, algorithm ? algorithm : "");
    return HCOMM_SUCCESS;
  });
}

HCOMM_API hcomm_result_t hcomm_comm_query_algorithm(hcomm_comm_t comm, hcomm_coll_t coll, size_t count,
                                                    hcomm_dtype_t dtype, const char** algorithm) {
  const char* fn = "hcomm_comm_query_algorithm";
  return c_boundary([&] {
    HCOMM_ARG_CHECK(algorithm, "%s: algorithm is NULL", fn);
    *algorithm = nullptr;
    comm::Communicator& c = checked_comm(fn, comm);
    check_coll(fn, coll);
    check_dtype(fn, dtype);
    checked_bytes(fn, count, dtype, c.size());
    // The variable-size collectives are asked about with count elements per rank.
    std::vector<size_t> counts(c.size(), count), displs(c.size());
    for (size_t r = 0; r < displs.size(); ++r) displs[r] = r * count;
    hcomm_coll_args_t args = make_args(coll, count, dtype, HCOMM_SUM, 0);
    if (coll == HCOMM_COLL_ALLGATHERV || coll == HCOMM_COLL_REDUCE_SCATTER_V || coll == HCOMM_COLL_ALLTOALLV) {
      args.count = 0;
      args.recv_counts = counts.data();
      args.recv_displs = displs.data();
      if (coll == HCOMM_COLL_ALLTOALLV) {
        args.send_counts = counts.data();
        args.send_displs = displs.data();
      }
    }
    const hcomm_algorithm_desc_t* chosen = c.query_algorithm(args);
    if (!chosen)
      HCOMM_THROW(HCOMM_ERR_UNSUPPORTED,
                  "%s: no loaded algorithm serves %s of %zu elements of %s on %d ranks (see "
                  "hcomm-info)",
                  fn, coll_name(coll), count, dtype_name(dtype), c.size());
    *algorithm = chosen->name;
    return HCOMM_SUCCESS;
  });
}

HCOMM_API hcomm_result_t hcomm_test(hcomm_request_t request, int* done) {
  return test(request, done, nullptr, "hcomm_test");
}

HCOMM_API hcomm_result_t hcomm_test_status(hcomm_request_t request, int* done, hcomm_status_t* status) {
  return test(request, done, status, "hcomm_test_status");
}

HCOMM_API hcomm_result_t hcomm_wait(hcomm_request_t request) { return wait(request, nullptr, "hcomm_wait"); }

HCOMM_API hcomm_result_t hcomm_wait_status(hcomm_request_t request, hcomm_status_t* status) {
  return wait(request, status, "hcomm_wait_status");
}

HCOMM_API hcomm_result_t hcomm_cancel(hcomm_request_t request) {
  return c_boundary([&] {
    HCOMM_ARG_CHECK(request, "hcomm_cancel: request is NULL");
    if (request->ticket)
      HCOMM_THROW(HCOMM_ERR_UNSUPPORTED,
                  "hcomm_cancel: the request is a nonblocking call on device buffers, queued on the device's stream, "
                  "which cannot be withdrawn; wait for it");
    const auto turn = request->comm->host_turn();
    if (request->message)
      request->comm->cancel(request->message);
    else
      request->comm->cancel(request->op);
    return HCOMM_SUCCESS;
  });
}

}  // extern "C"
