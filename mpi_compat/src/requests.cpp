// Request handles and their completion: wait, test (one, all, any, some),
// free, cancel, persistent requests' start, and the status a request leaves:
// what it says (MPI_Get_count, MPI_Get_elements) and what sets it.
#include "mpi_compat/src/requests.hpp"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <climits>
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

// An inactive persistent request counts as MPI_REQUEST_NULL in completions.
bool active(MPI_Request handle) { return handle != MPI_REQUEST_NULL && request_of(handle).active; }

// Requests MPI_Request_free let go of before MPI_Grequest_complete: that
// call frees them (free_fn), by the handle their user kept.
std::map<MPI_Request, std::unique_ptr<Request>> freed_generalized;

// The class of an error code a generalized request's callback returned.
int callback_class(int rc) { return class_of(rc) ? class_of(rc) : MPI_ERR_OTHER; }

// A generalized request's callback returned rc: unless MPI_SUCCESS, r's
// error, where it has none yet (the first failing callback's, as MPICH has it).
void callback_result(Request& r, int rc, const char* callback) {
  if (rc == MPI_SUCCESS || r.error_class != MPI_SUCCESS) return;
  r.error_class = callback_class(rc);
  r.error_text = std::string(callback) + " of the generalized request returned error code " + std::to_string(rc);
}

// A complete generalized request's status, as its query_fn fills it (each
// call that reports the status asks anew).
void query(Request& r) {
  r.status = {};
  r.error_class = MPI_SUCCESS;
  callback_result(r, r.generalized->query_fn(r.generalized->extra_state, &r.status), "query_fn");
}

// Frees a complete generalized request's user state (free_fn).
void free_generalized(Request& r) { callback_result(r, r.generalized->free_fn(r.generalized->extra_state), "free_fn"); }

// Finishes a complete generalized request whose handle is going: query_fn
// fills status, then free_fn frees its state (MPI 3.1 section 12.2).
void finish_generalized(Request& r, MPI_Status* status) {
  complete(r);
  query(r);
  free_generalized(r);
  report(r, status);
}

// Waits for one request handle and frees it (a persistent one becomes
// inactive); MPI_REQUEST_NULL and inactive ones are done.
void wait_handle(MPI_Request* request, MPI_Status* status, const char* fn) {
  if (!active(*request)) return empty_status(status);
  auto it = requests.find(*request);
  if (it->second->start) {
    Request& r = *it->second;
    r.active = false;
    wait_request(r, status, fn);
    return;
  }
  if (Request& g = *it->second; g.generalized)  // MPI_Grequest_complete finds it by its handle meanwhile
    poll_until(
        fn, [&] { return is_done(g, fn); }, true);
  std::unique_ptr<Request> r = std::move(it->second);
  requests.erase(it);
  *request = MPI_REQUEST_NULL;
  if (r->generalized) return finish_generalized(*r, status);
  wait_request(*r, status, fn);
}

bool test_request(Request& r, const char* fn) {
  progress();
  return is_done(r, fn);
}

// MPI_Start: a persistent request that is inactive begins a round.
void start_persistent(MPI_Request handle) {
  if (handle == MPI_REQUEST_NULL) fail(MPI_ERR_REQUEST, "request is MPI_REQUEST_NULL");
  Request& r = request_of(handle);
  if (!r.start) fail(MPI_ERR_REQUEST, "0x%x is no persistent request (MPI_Send_init, MPI_Recv_init, ...)", handle);
  if (r.active) fail(MPI_ERR_REQUEST, "the persistent request 0x%x is active already: complete it first", handle);
  Request fresh;
  fresh.comm = r.comm;
  fresh.start = std::move(r.start);
  fresh.packed_in = std::move(r.packed_in);  // its buffers, for the next round
  fresh.packed_out = std::move(r.packed_out);
  r = std::move(fresh);
  r.start(r);
  r.active = true;
}

MPI_Status* status_at(MPI_Status* statuses, int i) {
  return statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
}

// The checks of an array of request handles; whether any is active (not
// MPI_REQUEST_NULL, not an inactive persistent request).
bool check_requests(int count, const MPI_Request* array, const char* argument) {
  if (count < 0) fail(MPI_ERR_COUNT, "count is %d, below 0", count);
  if (count && !array) fail(MPI_ERR_REQUEST, "%s is NULL", argument);
  bool any = false;
  for (int i = 0; i < count; ++i)
    if (array[i] != MPI_REQUEST_NULL) any = request_of(array[i]).active || any;
  return any;
}

// Whether an active one of the requests is generalized (a wait for them has no time limit).
bool any_generalized(int count, const MPI_Request* array) {
  for (int i = 0; i < count; ++i)
    if (active(array[i]) && request_of(array[i]).generalized) return true;
  return false;
}

// The index of the first active request that is done, or MPI_UNDEFINED.
int first_done(int count, MPI_Request* array, const char* fn) {
  for (int i = 0; i < count; ++i)
    if (active(array[i]) && is_done(request_of(array[i]), fn)) return i;
  return MPI_UNDEFINED;
}

// Frees every active request that is done, recording their indices and
// statuses (MPI_Waitsome, MPI_Testsome); a failed one's error stays in its
// status and the call fails with MPI_ERR_IN_STATUS.
void take_done(int incount, MPI_Request* array, int* outcount, int* indices, MPI_Status* statuses, const char* fn) {
  *outcount = 0;
  std::optional<Error> first;
  for (int i = 0; i < incount; ++i) {
    if (!active(array[i]) || !is_done(request_of(array[i]), fn)) continue;
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

// HComm's text speaks of its own messages: say which MPI message it carries.
void name_message(const Request& r, Error& e) {
  if (r.peer == MPI_PROC_NULL) return;
  e.text += " [the MPI message " + std::string(r.receive ? "from " : "to ") +
            (r.peer == MPI_ANY_SOURCE ? "any rank" : "rank " + std::to_string(r.peer)) + " with tag " +
            (r.tag == MPI_ANY_TAG ? "MPI_ANY_TAG" : std::to_string(r.tag)) + "]";
}

// What HComm's receive said once it finished: its status, or a truncation,
// which is the MPI request's own error; anything else fails the call.
void received(Request& r, hcomm_result_t rc, const hcomm_status_t& got, const char* fn) {
  if (rc != HCOMM_SUCCESS && rc != HCOMM_ERR_TRUNCATED) check(rc, fn);
  status_from(r.status, got, r.room);
  if (rc == HCOMM_ERR_TRUNCATED) {
    r.error_class = MPI_ERR_TRUNCATE;
    r.error_text = hcomm_get_last_error();
  }
}

// Tests r's HComm request i; a receive's keeps its status. A failure is
// r's error, which completing r reports.
bool test_one(Request& r, size_t i, const char* fn) {
  hcomm_request_t& h = r.hcomm[i];
  if (!h) return true;
  try {
    if (!(r.receive && i == 0)) return test_hcomm(h, fn);
    int done = 0;
    hcomm_status_t got{};
    const hcomm_result_t rc = hcomm_test_status(h, &done, &got);
    if (rc == HCOMM_SUCCESS && !done) return false;
    h = nullptr;  // freed by HComm
    received(r, rc, got, fn);
  } catch (Error& e) {
    name_message(r, e);
    if (r.error_class == MPI_SUCCESS) {
      r.error_class = e.error_class;
      r.error_text = e.text;
    }
  }
  return true;
}

// Every request under way: those with handles, and the freed ones.
template <class F>
void for_each_pending(F f) {
  for (auto& [handle, r] : requests)
    if (r->active && !r->completed) f(*r);
  for (auto& r : freed) f(*r);
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

void status_from(MPI_Status& s, const hcomm_status_t& got, size_t room) {
  s.MPI_SOURCE = got.source == HCOMM_ANY_SOURCE ? MPI_ANY_SOURCE : got.source;
  s.MPI_TAG = got.tag == HCOMM_ANY_TAG ? MPI_ANY_TAG : got.tag;
  set_count(s, static_cast<MPI_Count>(std::min(got.bytes, room)));
  set_cancelled(s, got.cancelled != 0);
}

MPI_Request add_request(std::unique_ptr<Request> r) {
  const MPI_Request handle = static_cast<MPI_Request>(0xac000000u + (next_request++ & 0x3ffffffu));
  requests[handle] = std::move(r);
  return handle;
}

int persistent(const char* fn, MPI_Comm comm, MPI_Request* request, const std::function<void(const Comm&)>& check_args,
               std::function<void(Request&, const Comm&)> start) {
  return call(fn, comm, [&] {
    check_args(comm_of(comm));
    if (!request) fail(MPI_ERR_ARG, "request is NULL");
    auto r = std::make_unique<Request>();
    r->comm = comm;
    r->active = false;
    r->start = [start = std::move(start)](Request& q) { start(q, comm_of(q.comm)); };
    *request = add_request(std::move(r));
  });
}

bool is_done(Request& r, const char* fn) {
  if (r.generalized) return r.generalized->complete.load(std::memory_order_acquire);
  bool done = true;
  for (size_t i = 0; i < r.hcomm.size(); ++i) done = test_one(r, i, fn) && done;
  return done;
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

bool others_pending(MPI_Comm comm) {
  bool any = false;
  for_each_pending([&](const Request& r) { any = any || (r.comm != comm && !r.generalized); });
  return any;
}

bool test_hcomm(hcomm_request_t& request, const char* fn) {
  if (!request) return true;
  int done = 0;
  const hcomm_result_t rc = hcomm_test(request, &done);
  if (rc != HCOMM_SUCCESS || done) request = nullptr;  // freed by HComm
  check(rc, fn);
  return done;
}

bool progress() {
  bool moved = false;
  // Moved: some HComm request finished now.
  for_each_pending([&](Request& r) {
    const auto under_way = [&] {
      return std::ranges::count_if(r.hcomm, [](hcomm_request_t h) { return h != nullptr; });
    };
    const auto before = under_way();
    if (!before) return;
    is_done(r, "a request under way");
    moved = moved || under_way() < before;
  });
  return complete_freed("a freed MPI request", false) || moved;
}

void poll_until(const char* fn, const std::function<bool()>& done, bool patient) {
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
      if (!patient && round % 1024 == 0 && Clock::now() > deadline)
        fail(MPI_ERR_OTHER, "%s: no message moved for %g s (HCOMM_TIMEOUT); a peer is missing its side", fn,
             state().timeout_s);
    }
  }
}

void wait_hcomm(hcomm_request_t& request, const char* fn) {
  if (!request) return;
  if (!others_pending(MPI_COMM_NULL)) {
    check(hcomm_wait(std::exchange(request, nullptr)), fn);
    return;
  }
  poll_until(fn, [&] { return test_hcomm(request, fn); });
}

void wait_request(Request& r, MPI_Status* status, const char* fn) {
  try {
    if (is_done(r, fn)) {
      // finished already
    } else if (r.generalized || others_pending(r.comm)) {
      // Their communicators move only while calls on them run: poll them all.
      poll_until(
          fn, [&] { return is_done(r, fn); }, r.generalized != nullptr);
    } else {
      for (size_t i = 0; i < r.hcomm.size(); ++i) {
        hcomm_request_t& h = r.hcomm[i];
        if (!h) continue;
        if (r.receive && i == 0) {
          hcomm_status_t got{};
          const hcomm_result_t rc = hcomm_wait_status(std::exchange(h, nullptr), &got);
          received(r, rc, got, fn);
        } else {
          check(hcomm_wait(std::exchange(h, nullptr)), fn);
        }
      }
    }
  } catch (Error& e) {
    name_message(r, e);
    throw;
  }
  complete(r);
  report(r, status);
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
    poll_until(
        "MPI_Waitany",
        [&] {
          *indx = first_done(count, array_of_requests, "MPI_Waitany");
          return *indx != MPI_UNDEFINED;
        },
        any_generalized(count, array_of_requests));
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
    poll_until(
        "MPI_Waitsome", [&] { return first_done(incount, array_of_requests, "MPI_Waitsome") != MPI_UNDEFINED; },
        any_generalized(incount, array_of_requests));
    take_done(incount, array_of_requests, outcount, array_of_indices, array_of_statuses, "MPI_Waitsome");
  });
}
HCOMM_MPI_ALIAS(Waitsome)

HCOMM_MPI_API int PMPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  return call("MPI_Test", MPI_COMM_WORLD, [&] {
    require_initialized("MPI_Test");
    if (!request) fail(MPI_ERR_REQUEST, "request is NULL");
    if (!flag) fail(MPI_ERR_ARG, "flag is NULL");
    *flag = !active(*request) || test_request(request_of(*request), "MPI_Test");
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
      if (active(array_of_requests[i])) all = is_done(request_of(array_of_requests[i]), "MPI_Testall") && all;
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

// A persistent request that is active finishes its round in the background.
HCOMM_MPI_API int PMPI_Request_free(MPI_Request* request) {
  return call("MPI_Request_free", MPI_COMM_WORLD, [&] {
    require_initialized("MPI_Request_free");
    if (!request) fail(MPI_ERR_ARG, "request is NULL");
    if (*request == MPI_REQUEST_NULL) fail(MPI_ERR_REQUEST, "request is MPI_REQUEST_NULL");
    request_of(*request);
    auto it = requests.find(*request);
    std::unique_ptr<Request> r = std::move(it->second);
    requests.erase(it);
    const MPI_Request handle = std::exchange(*request, MPI_REQUEST_NULL);
    if (r->generalized && !is_done(*r, "MPI_Request_free")) {
      freed_generalized[handle] = std::move(r);  // MPI_Grequest_complete frees it
    } else if (r->generalized) {
      free_generalized(*r);
      report(*r, MPI_STATUS_IGNORE);
    } else if (r->active) {
      add_freed(std::move(r));
    }
    progress();
  });
}
HCOMM_MPI_ALIAS(Request_free)

// A receive that has not matched a message is cancelled (hcomm_cancel); a
// send (which may be on its way already) or a collective completes as it
// would.
HCOMM_MPI_API int PMPI_Cancel(MPI_Request* request) {
  return call("MPI_Cancel", MPI_COMM_WORLD, [&] {
    require_initialized("MPI_Cancel");
    if (!request) fail(MPI_ERR_ARG, "request is NULL");
    if (*request == MPI_REQUEST_NULL) fail(MPI_ERR_REQUEST, "request is MPI_REQUEST_NULL");
    Request& r = request_of(*request);
    if (!r.active) fail(MPI_ERR_REQUEST, "the persistent request is inactive (MPI_Start starts it)");
    if (r.receive && !r.hcomm.empty() && r.hcomm[0]) check(hcomm_cancel(r.hcomm[0]), "hcomm_cancel");
    if (r.generalized) {
      const int rc = r.generalized->cancel_fn(r.generalized->extra_state, is_done(r, "MPI_Cancel"));
      if (rc != MPI_SUCCESS)
        fail(callback_class(rc), "cancel_fn of the generalized request returned error code %d", rc);
    }
  });
}
HCOMM_MPI_ALIAS(Cancel)

HCOMM_MPI_API int PMPI_Start(MPI_Request* request) {
  MPI_Comm comm = MPI_COMM_WORLD;
  if (request && requests.count(*request)) comm = requests[*request]->comm;
  return call("MPI_Start", comm, [&] {
    require_initialized("MPI_Start");
    if (!request) fail(MPI_ERR_ARG, "request is NULL");
    start_persistent(*request);
  });
}
HCOMM_MPI_ALIAS(Start)

HCOMM_MPI_API int PMPI_Startall(int count, MPI_Request array_of_requests[]) {
  return call("MPI_Startall", MPI_COMM_WORLD, [&] {
    require_initialized("MPI_Startall");
    if (count < 0) fail(MPI_ERR_COUNT, "count is %d, below 0", count);
    if (count && !array_of_requests) fail(MPI_ERR_ARG, "array_of_requests is NULL");
    for (int i = 0; i < count; ++i) start_persistent(array_of_requests[i]);
  });
}
HCOMM_MPI_ALIAS(Startall)

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
    if (!r.active) {
      *flag = 1;
      return empty_status(status);
    }
    *flag = test_request(r, "MPI_Request_get_status");
    if (!*flag) return;
    complete(r);
    if (r.generalized) query(r);
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

namespace {

// The basic elements a status's bytes hold in elements of datatype.
MPI_Count elements_of(const MPI_Status* status, MPI_Datatype datatype, const void* count) {
  if (!status || status == MPI_STATUS_IGNORE) fail(MPI_ERR_ARG, "status is NULL or MPI_STATUS_IGNORE");
  if (!count) fail(MPI_ERR_ARG, "count is NULL");
  type_of(datatype);
  return basic_elements(*layout_of(datatype), count_of(*status));
}

// Records in status the bytes of `count` basic elements in elements of datatype.
void set_elements(MPI_Status* status, MPI_Datatype datatype, MPI_Count count) {
  if (!status || status == MPI_STATUS_IGNORE) fail(MPI_ERR_ARG, "status is NULL or MPI_STATUS_IGNORE");
  if (count < 0) fail(MPI_ERR_COUNT, "count is %ld, below 0", static_cast<long>(count));
  type_of(datatype);
  set_count(*status, basic_elements_bytes(*layout_of(datatype), count));
}

}  // namespace

HCOMM_MPI_API int PMPI_Get_elements(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  return call("MPI_Get_elements", MPI_COMM_WORLD, [&] {
    const MPI_Count n = elements_of(status, datatype, count);
    *count = n > INT_MAX ? MPI_UNDEFINED : static_cast<int>(n);
  });
}
HCOMM_MPI_ALIAS(Get_elements)

HCOMM_MPI_API int PMPI_Get_elements_x(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count) {
  return call("MPI_Get_elements_x", MPI_COMM_WORLD, [&] { *count = elements_of(status, datatype, count); });
}
HCOMM_MPI_ALIAS(Get_elements_x)

HCOMM_MPI_API int PMPI_Status_set_elements(MPI_Status* status, MPI_Datatype datatype, int count) {
  return call("MPI_Status_set_elements", MPI_COMM_WORLD, [&] { set_elements(status, datatype, count); });
}
HCOMM_MPI_ALIAS(Status_set_elements)

HCOMM_MPI_API int PMPI_Status_set_elements_x(MPI_Status* status, MPI_Datatype datatype, MPI_Count count) {
  return call("MPI_Status_set_elements_x", MPI_COMM_WORLD, [&] { set_elements(status, datatype, count); });
}
HCOMM_MPI_ALIAS(Status_set_elements_x)

// Generalized requests (MPI 3.1 section 12.2): requests whose operation is
// the user's; MPI_Grequest_complete marks one done. The completion calls
// treat them as any request; the one that frees a request calls its
// query_fn, then its free_fn, MPI_Request_get_status its query_fn alone.
HCOMM_MPI_API int PMPI_Grequest_start(MPI_Grequest_query_function* query_fn, MPI_Grequest_free_function* free_fn,
                                      MPI_Grequest_cancel_function* cancel_fn, void* extra_state,
                                      MPI_Request* request) {
  return call("MPI_Grequest_start", MPI_COMM_WORLD, [&] {
    require_initialized("MPI_Grequest_start");
    if (!query_fn || !free_fn || !cancel_fn)
      fail(MPI_ERR_ARG, "%s is NULL: pass a function (one that does nothing and returns MPI_SUCCESS will do)",
           !query_fn  ? "query_fn"
           : !free_fn ? "free_fn"
                      : "cancel_fn");
    check_out(request, "request");
    auto r = std::make_unique<Request>();
    r->comm = MPI_COMM_WORLD;
    r->generalized.reset(new Generalized{query_fn, free_fn, cancel_fn, extra_state});
    *request = add_request(std::move(r));
  });
}
HCOMM_MPI_ALIAS(Grequest_start)

// Only marks the request (free_fn runs here where MPI_Request_free came first).
HCOMM_MPI_API int PMPI_Grequest_complete(MPI_Request request) {
  return call("MPI_Grequest_complete", MPI_COMM_WORLD, [&] {
    require_initialized("MPI_Grequest_complete");
    if (auto it = freed_generalized.find(request); it != freed_generalized.end()) {
      std::unique_ptr<Request> r = std::move(it->second);
      freed_generalized.erase(it);
      free_generalized(*r);
      return report(*r, MPI_STATUS_IGNORE);
    }
    if (request == MPI_REQUEST_NULL) fail(MPI_ERR_REQUEST, "request is MPI_REQUEST_NULL");
    Generalized* g = request_of(request).generalized.get();
    if (!g) fail(MPI_ERR_REQUEST, "0x%x is no generalized request (MPI_Grequest_start)", request);
    if (g->complete.exchange(true, std::memory_order_acq_rel))
      fail(MPI_ERR_REQUEST, "the generalized request 0x%x is complete already", request);
  });
}
HCOMM_MPI_ALIAS(Grequest_complete)

HCOMM_MPI_API int PMPI_Status_set_cancelled(MPI_Status* status, int flag) {
  return call("MPI_Status_set_cancelled", MPI_COMM_WORLD, [&] {
    if (!status || status == MPI_STATUS_IGNORE) fail(MPI_ERR_ARG, "status is NULL or MPI_STATUS_IGNORE");
    set_cancelled(*status, flag != 0);
  });
}
HCOMM_MPI_ALIAS(Status_set_cancelled)
