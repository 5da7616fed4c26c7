// Request handles and their completion: wait, test (one, all, any, some),
// free, cancel, and the status a request leaves.
#include "mpi_compat/src/requests.hpp"

#include <optional>
#include <utility>

#include "mpi_compat/src/datatypes.hpp"

namespace hcomm::mpi {
namespace {

std::map<MPI_Request, std::unique_ptr<Request>> requests;
unsigned next_request = 0;
// Requests no handle names any more (MPI_Request_free, buffered sends): they
// finish on their own and are deleted then.
std::vector<std::unique_ptr<Request>> freed;

Request& request_of(MPI_Request handle) {
  auto it = requests.find(handle);
  if (it == requests.end()) fail(MPI_ERR_REQUEST, "0x%x is no active request", static_cast<unsigned>(handle));
  return *it->second;
}

// Waits for one request handle and frees it; MPI_REQUEST_NULL is done.
void wait_handle(MPI_Request* request, MPI_Status* status, const char* fn) {
  if (*request == MPI_REQUEST_NULL) return empty_status(status);
  request_of(*request);
  auto it = requests.find(*request);
  std::unique_ptr<Request> r = std::move(it->second);
  requests.erase(it);
  *request = MPI_REQUEST_NULL;
  wait_request(*r, status, fn);
}

bool test_request(Request& r, const char* fn) {
  progress();
  return is_done(r, fn);
}

MPI_Status* status_at(MPI_Status* statuses, int i) {
  return statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
}

// The checks of an array of request handles; whether any is active (not MPI_REQUEST_NULL).
bool check_requests(int count, const MPI_Request* array, const char* argument) {
  if (count < 0) fail(MPI_ERR_COUNT, "count is %d, below 0", count);
  if (count && !array) fail(MPI_ERR_REQUEST, "%s is NULL", argument);
  bool active = false;
  for (int i = 0; i < count; ++i)
    if (array[i] != MPI_REQUEST_NULL) {
      request_of(array[i]);
      active = true;
    }
  return active;
}

// The index of the first active request that is done, or MPI_UNDEFINED.
int first_done(int count, MPI_Request* array, const char* fn) {
  for (int i = 0; i < count; ++i)
    if (array[i] != MPI_REQUEST_NULL && is_done(request_of(array[i]), fn)) return i;
  return MPI_UNDEFINED;
}

// Frees every active request that is done, recording their indices and
// statuses (MPI_Waitsome, MPI_Testsome); a failed one's error stays in its
// status and the call fails with MPI_ERR_IN_STATUS.
void take_done(int incount, MPI_Request* array, int* outcount, int* indices, MPI_Status* statuses, const char* fn) {
  *outcount = 0;
  std::optional<Error> first;
  for (int i = 0; i < incount; ++i) {
    if (array[i] == MPI_REQUEST_NULL || !is_done(request_of(array[i]), fn)) continue;
    indices[*outcount] = i;
    try {
      wait_handle(&array[i], status_at(statuses, *outcount), fn);
    } catch (const Error& e) {
      if (!first) first = e;
    }
    ++*outcount;
  }
  if (first) fail(MPI_ERR_IN_STATUS, "a request failed (its status holds the error): %s", first->text.c_str());
}

}  // namespace

void set_count(MPI_Status& s, MPI_Count bytes) {
  // MPICH's split: the low 32 bits, and the rest above the cancelled bit.
  s.count_lo = static_cast<int>(bytes);
  s.count_hi_and_cancelled = (s.count_hi_and_cancelled & 1) | static_cast<int>((bytes >> 31) & ~1L);
}

MPI_Count count_of(const MPI_Status& s) {
  return static_cast<MPI_Count>((static_cast<unsigned long>(static_cast<unsigned>(s.count_hi_and_cancelled) & ~1u))
                                << 31) +
         static_cast<unsigned>(s.count_lo);
}

void set_cancelled(MPI_Status& s, bool cancelled) {
  s.count_hi_and_cancelled = (s.count_hi_and_cancelled & ~1) | (cancelled ? 1 : 0);
}

void empty_status(MPI_Status* status) {
  if (status == MPI_STATUS_IGNORE) return;
  status->MPI_SOURCE = MPI_ANY_SOURCE;
  status->MPI_TAG = MPI_ANY_TAG;
  status->MPI_ERROR = MPI_SUCCESS;
  status->count_hi_and_cancelled = 0;
  set_count(*status, 0);
}

MPI_Request add_request(std::unique_ptr<Request> r) {
  const MPI_Request handle = static_cast<MPI_Request>(0xac000000u + (next_request++ & 0x3ffffffu));
  requests[handle] = std::move(r);
  return handle;
}

void complete(Request& r) {
  if (r.completed) return;
  r.completed = true;
  r.hcomm.clear();
  if (r.then) std::exchange(r.then, nullptr)();
  if (r.unpack) std::exchange(r.unpack, nullptr)();
}

void report(const Request& r, MPI_Status* status) {
  if (status != MPI_STATUS_IGNORE) {
    *status = r.status;
    status->MPI_ERROR = r.error_class;
  }
  if (r.error_class != MPI_SUCCESS) throw Error{r.error_class, r.error_text};
}

void add_freed(std::unique_ptr<Request> r) { freed.push_back(std::move(r)); }

bool complete_freed(const char* fn, bool wait) {
  bool any = false;
  for (size_t i = 0; i < freed.size();) {
    if (!wait && !is_done(*freed[i], fn)) {
      ++i;
      continue;
    }
    // Out of the list first: waiting moves progress, which looks at the list.
    std::unique_ptr<Request> r = std::move(freed[i]);
    freed[i] = std::move(freed.back());
    freed.pop_back();
    any = true;
    try {
      wait_request(*r, MPI_STATUS_IGNORE, fn);
    } catch (const Error& e) {
      // No handle names it: its error goes to its communicator's handler.
      raise(fn, r->comm, e);
    }
  }
  return any;
}

}  // namespace hcomm::mpi

using namespace hcomm::mpi;

HCOMM_MPI_API int PMPI_Wait(MPI_Request* request, MPI_Status* status) {
  MPI_Comm comm = MPI_COMM_WORLD;
  if (request && requests.count(*request)) comm = requests[*request]->comm;
  return call("MPI_Wait", comm, [&] {
    require_initialized("MPI_Wait");
    if (!request) fail(MPI_ERR_REQUEST, "request is NULL");
    wait_handle(request, status, "MPI_Wait");
  });
}
HCOMM_MPI_ALIAS(Wait)

HCOMM_MPI_API int PMPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]) {
  return call("MPI_Waitall", MPI_COMM_WORLD, [&] {
    require_initialized("MPI_Waitall");
    check_requests(count, array_of_requests, "array_of_requests");
    std::optional<Error> first;
    for (int i = 0; i < count; ++i) {
      try {
        wait_handle(&array_of_requests[i], status_at(array_of_statuses, i), "MPI_Waitall");
      } catch (const Error& e) {
        if (!first) first = e;
      }
    }
    if (first) fail(MPI_ERR_IN_STATUS, "a request failed (its status holds the error): %s", first->text.c_str());
  });
}
HCOMM_MPI_ALIAS(Waitall)

HCOMM_MPI_API int PMPI_Waitany(int count, MPI_Request array_of_requests[], int* indx, MPI_Status* status) {
  return call("MPI_Waitany", MPI_COMM_WORLD, [&] {
    require_initialized("MPI_Waitany");
    check_out(indx, "indx");
    *indx = MPI_UNDEFINED;
    if (!check_requests(count, array_of_requests, "array_of_requests")) return empty_status(status);
    poll_until("MPI_Waitany", [&] {
      *indx = first_done(count, array_of_requests, "MPI_Waitany");
      return *indx != MPI_UNDEFINED;
    });
    wait_handle(&array_of_requests[*indx], status, "MPI_Waitany");
  });
}
HCOMM_MPI_ALIAS(Waitany)

HCOMM_MPI_API int PMPI_Waitsome(int incount, MPI_Request array_of_requests[], int* outcount, int array_of_indices[],
                                MPI_Status array_of_statuses[]) {
  return call("MPI_Waitsome", MPI_COMM_WORLD, [&] {
    require_initialized("MPI_Waitsome");
    check_out(outcount, "outcount");
    *outcount = MPI_UNDEFINED;
    if (!check_requests(incount, array_of_requests, "array_of_requests")) return;
    check_out(array_of_indices, "array_of_indices");
    poll_until("MPI_Waitsome", [&] { return first_done(incount, array_of_requests, "MPI_Waitsome") != MPI_UNDEFINED; });
    take_done(incount, array_of_requests, outcount, array_of_indices, array_of_statuses, "MPI_Waitsome");
  });
}
HCOMM_MPI_ALIAS(Waitsome)

HCOMM_MPI_API int PMPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  return call("MPI_Test", MPI_COMM_WORLD, [&] {
    require_initialized("MPI_Test");
    if (!request) fail(MPI_ERR_REQUEST, "request is NULL");
    if (!flag) fail(MPI_ERR_ARG, "flag is NULL");
    *flag = *request == MPI_REQUEST_NULL || test_request(request_of(*request), "MPI_Test");
    if (*flag) wait_handle(request, status, "MPI_Test");
  });
}
HCOMM_MPI_ALIAS(Test)

HCOMM_MPI_API int PMPI_Testall(int count, MPI_Request array_of_requests[], int* flag, MPI_Status array_of_statuses[]) {
  return call("MPI_Testall", MPI_COMM_WORLD, [&] {
    require_initialized("MPI_Testall");
    check_requests(count, array_of_requests, "array_of_requests");
    if (!flag) fail(MPI_ERR_ARG, "flag is NULL");
    progress();
    bool all = true;
    for (int i = 0; i < count; ++i)
      if (array_of_requests[i] != MPI_REQUEST_NULL)
        all = is_done(request_of(array_of_requests[i]), "MPI_Testall") && all;
    *flag = all;
    for (int i = 0; all && i < count; ++i)
      wait_handle(&array_of_requests[i], status_at(array_of_statuses, i), "MPI_Testall");
  });
}
HCOMM_MPI_ALIAS(Testall)

HCOMM_MPI_API int PMPI_Testany(int count, MPI_Request array_of_requests[], int* indx, int* flag, MPI_Status* status) {
  return call("MPI_Testany", MPI_COMM_WORLD, [&] {
    require_initialized("MPI_Testany");
    check_out(indx, "indx");
    check_out(flag, "flag");
    *indx = MPI_UNDEFINED;
    *flag = 0;
    if (!check_requests(count, array_of_requests, "array_of_requests")) {
      *flag = 1;
      return empty_status(status);
    }
    progress();
    *indx = first_done(count, array_of_requests, "MPI_Testany");
    if (*indx == MPI_UNDEFINED) return;
    *flag = 1;
    wait_handle(&array_of_requests[*indx], status, "MPI_Testany");
  });
}
HCOMM_MPI_ALIAS(Testany)

HCOMM_MPI_API int PMPI_Testsome(int incount, MPI_Request array_of_requests[], int* outcount, int array_of_indices[],
                                MPI_Status array_of_statuses[]) {
  return call("MPI_Testsome", MPI_COMM_WORLD, [&] {
    require_initialized("MPI_Testsome");
    check_out(outcount, "outcount");
    *outcount = MPI_UNDEFINED;
    if (!check_requests(incount, array_of_requests, "array_of_requests")) return;
    check_out(array_of_indices, "array_of_indices");
    progress();
    take_done(incount, array_of_requests, outcount, array_of_indices, array_of_statuses, "MPI_Testsome");
  });
}
HCOMM_MPI_ALIAS(Testsome)

HCOMM_MPI_API int PMPI_Request_free(MPI_Request* request) {
  return call("MPI_Request_free", MPI_COMM_WORLD, [&] {
    require_initialized("MPI_Request_free");
    if (!request) fail(MPI_ERR_ARG, "request is NULL");
    if (*request == MPI_REQUEST_NULL) fail(MPI_ERR_REQUEST, "request is MPI_REQUEST_NULL");
    request_of(*request);
    auto it = requests.find(*request);
    add_freed(std::move(it->second));
    requests.erase(it);
    *request = MPI_REQUEST_NULL;
    progress();
  });
}
HCOMM_MPI_ALIAS(Request_free)

// Only a receive that has not matched a message can be cancelled; a send
// (which may be on its way already) or a collective completes as it would.
HCOMM_MPI_API int PMPI_Cancel(MPI_Request* request) {
  return call("MPI_Cancel", MPI_COMM_WORLD, [&] {
    require_initialized("MPI_Cancel");
    if (!request) fail(MPI_ERR_ARG, "request is NULL");
    if (*request == MPI_REQUEST_NULL) fail(MPI_ERR_REQUEST, "request is MPI_REQUEST_NULL");
    Request& r = request_of(*request);
    if (r.receive) cancel_receive(r);
  });
}
HCOMM_MPI_ALIAS(Cancel)

HCOMM_MPI_API int PMPI_Test_cancelled(const MPI_Status* status, int* flag) {
  return call("MPI_Test_cancelled", MPI_COMM_WORLD, [&] {
    if (!status || status == MPI_STATUS_IGNORE) fail(MPI_ERR_ARG, "status is NULL or MPI_STATUS_IGNORE");
    check_out(flag, "flag");
    *flag = status->count_hi_and_cancelled & 1;
  });
}
HCOMM_MPI_ALIAS(Test_cancelled)

HCOMM_MPI_API int PMPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  return call("MPI_Request_get_status", MPI_COMM_WORLD, [&] {
    require_initialized("MPI_Request_get_status");
    check_out(flag, "flag");
    if (request == MPI_REQUEST_NULL) {
      *flag = 1;
      return empty_status(status);
    }
    Request& r = request_of(request);
    *flag = test_request(r, "MPI_Request_get_status");
    if (!*flag) return;
    complete(r);
    report(r, status);
  });
}
HCOMM_MPI_ALIAS(Request_get_status)

HCOMM_MPI_API int PMPI_Get_count(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  return call("MPI_Get_count", MPI_COMM_WORLD, [&] {
    if (!status || status == MPI_STATUS_IGNORE) fail(MPI_ERR_ARG, "status is NULL or MPI_STATUS_IGNORE");
    if (!count) fail(MPI_ERR_ARG, "count is NULL");
    const size_t size = type_of(datatype).size;
    const MPI_Count bytes = count_of(*status);
    *count = bytes % static_cast<MPI_Count>(size) ? MPI_UNDEFINED : static_cast<int>(bytes / size);
  });
}
HCOMM_MPI_ALIAS(Get_count)
