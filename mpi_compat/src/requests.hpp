// MPI requests: a set of HComm requests to finish, and for a receive what
// HComm's status said. requests.cpp keeps the handles and the completion
// calls (wait, test, free, cancel, start); p2p.cpp starts sends and receives.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mpi_compat/src/state.hpp"

namespace hcomm::mpi {

// A generalized request's side (MPI_Grequest_start): the user's functions
// and state, and whether MPI_Grequest_complete marked it done (a flag that
// another thread of the user's may set while a wait polls it).
struct Generalized {
  MPI_Grequest_query_function* query_fn;
  MPI_Grequest_free_function* free_fn;
  MPI_Grequest_cancel_function* cancel_fn;
  void* extra_state;
  std::atomic<bool> complete{false};
};

struct Request {
  MPI_Comm comm = MPI_COMM_NULL;
  std::vector<hcomm_request_t> hcomm;  // to finish, in any order; null once done
  std::function<void()> then;          // once they are done: a copy into place, a release
  MPI_Status status{};                 // what a receive got
  bool completed = false;              // hcomm finished and `then` run
  // A blocking collective's: HComm's blocking form runs at once, and leaves
  // nothing in `hcomm` to finish.
  bool blocking = false;
  // A receive: hcomm[0] is HComm's receive, whose status fills `status`.
  bool receive = false;
  size_t room = 0;                    // a receive's bytes
  int peer = MPI_PROC_NULL, tag = 0;  // of a send or a receive, as called
  std::vector<size_t> counts;         // layouts an HComm v-collective reads while it runs
  // Types whose elements do not lie packed: what HComm reads (packed before
  // the call) and writes (unpacked by `unpack` once it is done).
  std::vector<unsigned char> packed_in, packed_out;
  std::function<void()> unpack;
  int error_class = MPI_SUCCESS;
  std::string error_text;
  // A persistent request (MPI_Send_init, MPI_Recv_init, ...): `start` begins
  // each round (MPI_Start); `active` while a round runs.
  std::function<void(Request&)> start;
  bool active = true;
  // A generalized request: no HComm request; done once its user says so.
  std::unique_ptr<Generalized> generalized;
};

// Starts an HComm operation by post(&request) (an hcomm_i* call) into `into`.
template <class Post>
void issue(std::vector<hcomm_request_t>& into, const char* fn, Post post) {
  hcomm_request_t h = nullptr;
  check(post(&h), fn);
  into.push_back(h);
}

// The checks of a send's arguments (MPI errors); the bytes it moves.
size_t check_send(const Comm& c, const void* buf, int count, MPI_Datatype type, int dest, int tag);
// Starts a send into r (HComm's hcomm_isend, or hcomm_issend where
// synchronous), packing a type whose elements do not lie packed.
void start_send(Request& r, const Comm& c, const void* buf, int count, MPI_Datatype type, int dest, int tag,
                bool synchronous);
// A new MPI request handle for r.
MPI_Request add_request(std::unique_ptr<Request> r);
// An MPI_*_init call: its arguments checked now (check_args), `start` run
// at each MPI_Start of the persistent request it hands back in *request.
int persistent(const char* fn, MPI_Comm comm, MPI_Request* request, const std::function<void(const Comm&)>& check_args,
               std::function<void(Request&, const Comm&)> start);
// Finishes r (waiting as wait_hcomm does) and fills status (may be
// MPI_STATUS_IGNORE); errors as Error.
void wait_request(Request& r, MPI_Status* status, const char* fn);
// Whether r is done.
bool is_done(Request& r, const char* fn);
// Runs r's last step once it is done: its copy, its release.
void complete(Request& r);
// Fills status (may be MPI_STATUS_IGNORE) from a completed r; its error as Error.
void report(const Request& r, MPI_Status* status);
// Completes the requests MPI_Request_free let go of that are done; with
// wait, waits for all of them (MPI_Finalize).
bool complete_freed(const char* fn, bool wait);
// Hands r to the requests completed in the background (freed ones, buffered
// sends): it finishes on its own, and is deleted then.
void add_freed(std::unique_ptr<Request> r);
// Whether requests of communicators other than `comm` are under way: a wait
// on `comm` then polls, so that theirs move too (HComm moves a
// communicator's messages while a call on it waits).
bool others_pending(MPI_Comm comm);

// MPICH's MPI_Status keeps the byte count in two ints and the cancelled flag.
void set_count(MPI_Status& s, MPI_Count bytes);
MPI_Count count_of(const MPI_Status& s);
void set_cancelled(MPI_Status& s, bool cancelled);
// The status of a request that got nothing (MPI_PROC_NULL, MPI_REQUEST_NULL).
void empty_status(MPI_Status* status);
// A receive's MPI status from HComm's (room: the receive's bytes).
void status_from(MPI_Status& s, const hcomm_status_t& got, size_t room);

}  // namespace hcomm::mpi
