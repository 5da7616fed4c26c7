// The MPI layer's shared pieces: how a function is exported, how errors
// travel (an exception inside, an error code or a fatal stop at the C
// boundary), and the handle tables of communicators and requests.
#pragma once

#include <hcomm/hcomm.h>
#include <mpi.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

// Every function is defined as PMPI_<name> and exported, with MPI_<name> as
// its weak alias: the profiling interface (a tool's MPI_<name> wins and
// calls PMPI_<name>).
#define HCOMM_MPI_API extern "C" __attribute__((visibility("default")))
#define HCOMM_MPI_ALIAS(name) \
  extern "C" __attribute__((weak, alias("PMPI_" #name), visibility("default"))) decltype(PMPI_##name) MPI_##name;

namespace hcomm::mpi {

// The largest tag: HComm's.
constexpr int kTagUb = HCOMM_TAG_MAX;

// An MPI error inside the layer: its class and the text that says what was wrong.
struct Error {
  int error_class;
  std::string text;
};
[[noreturn]] void fail(int error_class, const char* format, ...) __attribute__((format(printf, 2, 3)));
// The class of an error code (its low bits).
int class_of(int code);
// An HComm call's failure as an MPI error, with HComm's text.
[[noreturn]] void fail_hcomm(hcomm_result_t result, const char* fn);
inline void check(hcomm_result_t result, const char* fn) {
  if (result != HCOMM_SUCCESS) fail_hcomm(result, fn);
}
// MPI_ERR_ARG for an output argument that is NULL.
void check_out(const void* p, const char* argument);
// MPI_ERR_BUFFER for a NULL buffer that should hold bytes.
inline void check_buffer(const void* buf, size_t bytes, const char* argument) {
  if (!buf && bytes) fail(MPI_ERR_BUFFER, "%s is NULL but its count is not 0", argument);
}

// A communicator: HComm's, its members in world ranks (for MPI_Comm_compare)
// and its error handler.
struct Comm {
  hcomm_comm_t h = nullptr;
  int rank = 0, size = 0;
  std::vector<int> world_ranks;
  MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;
  std::string name;
};

// The state of the library between MPI_Init and MPI_Finalize.
struct State {
  bool initialized = false, finalized = false;
  int thread_level = MPI_THREAD_SINGLE;
  std::map<MPI_Comm, Comm> comms;
  int next_comm = 0;
  double timeout_s = 300;  // HCOMM_TIMEOUT: how long a wait in this layer may see no progress
};
extern State the_state;
inline State& state() { return the_state; }

// The communicator behind a handle, or MPI_ERR_COMM; MPI_ERR_OTHER before
// MPI_Init or after MPI_Finalize.
Comm& comm_of(MPI_Comm handle);
void require_initialized(const char* fn);
MPI_Comm add_comm(Comm comm);
// The members of a new HComm communicator in world ranks (collective over it).
std::vector<int> world_ranks_of(hcomm_comm_t h, int size);

// Runs body for MPI function fn on communicator comm: returns MPI_SUCCESS,
// or hands an Error to comm's error handler (MPI_COMM_WORLD's if comm is not
// valid) and returns its error code.
template <class Body>
int call(const char* fn, MPI_Comm comm, Body&& body);
int raise(const char* fn, MPI_Comm comm, const Error& error);
int unsupported(const char* fn, MPI_Comm comm);

template <class Body>
int call(const char* fn, MPI_Comm comm, Body&& body) {
  try {
    body();
    return MPI_SUCCESS;
  } catch (const Error& e) {
    return raise(fn, comm, e);
  } catch (const std::bad_alloc&) {
    return raise(fn, comm, Error{MPI_ERR_NO_MEM, "out of memory"});
  } catch (const std::exception& e) {
    return raise(fn, comm, Error{MPI_ERR_INTERN, e.what()});
  }
}

// Tests every request under way, of every communicator (HComm moves a
// communicator's messages while a call on it runs), and completes the freed
// ones that are done; true if anything completed.
bool progress();
// Waits for an HComm request (null is done): hcomm_wait when no other
// request is under way, else polls it with the layer's progress, failing
// after HCOMM_TIMEOUT seconds without progress.
void wait_hcomm(hcomm_request_t& request, const char* fn);
// Moves the layer's progress until done() says so, failing after
// HCOMM_TIMEOUT seconds in which nothing moved; without a limit where
// `patient` (a generalized request, which its user completes whenever).
void poll_until(const char* fn, const std::function<bool()>& done, bool patient = false);
// Tests an HComm request; null is done (and stays null).
bool test_hcomm(hcomm_request_t& request, const char* fn);

}  // namespace hcomm::mpi
