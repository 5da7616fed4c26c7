// MPI requests: a set of HComm requests to finish, and for receives the
// envelope step of the point-to-point protocol (p2p.cpp). requests.cpp keeps
// the handles and the completion calls (wait, test, free, cancel).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mpi_compat/src/state.hpp"

namespace hcomm::mpi {

// Every point-to-point message starts with this envelope: the message's
// byte count, and the message itself when it is small; a larger one follows
// as a second HComm message. HComm matches a receive of exactly the bytes
// sent, so the envelope is what lets MPI receive into a larger buffer and
// report the count.
constexpr size_t kInlineBytes = 240;
struct Envelope {
  uint64_t bytes = 0;
  uint32_t flags = 0;  // kSynchronous: the receiver acknowledges the match
  uint32_t reserved = 0;
  unsigned char data[kInlineBytes];
};
constexpr uint32_t kSynchronous = 1;

// What an HComm message of the layer is: its tag is the MPI tag shifted
// left by two, with the part in the low two bits.
enum Part { kEnvelope = 0, kData = 1, kAck = 2 };
inline int hcomm_tag(int tag, Part part) { return (tag << 2) | part; }

struct Request {
  MPI_Comm comm = MPI_COMM_NULL;
  std::vector<hcomm_request_t> hcomm;  // to finish, in any order; null once done
  std::function<void()> then;          // once they are done: a copy into place, a release
  MPI_Status status{};                 // what a receive got
  bool completed = false;              // hcomm finished and `then` run
  // Receives: the envelope to wait for, then where the message goes.
  bool receive = false;
  bool awaiting_envelope = false;
  void* buf = nullptr;
  size_t capacity = 0;
  int peer = MPI_PROC_NULL, tag = 0;    // of a send or a receive
  Envelope envelope;                    // a send's
  std::vector<unsigned char> overflow;  // a truncated message's bytes
  unsigned char ack = 0;
  std::vector<size_t> counts;  // layouts an HComm v-collective reads while it runs
  // Types whose elements do not lie packed: what HComm reads (packed before
  // the call) and writes (unpacked by `unpack` once it is done).
  std::vector<unsigned char> packed_in, packed_out;
  std::function<void()> unpack;
  int error_class = MPI_SUCCESS;
  std::string error_text;
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
// Starts a send into r: the envelope, the data if it did not fit, and for
// a synchronous send the receive of the acknowledgement.
void start_send(Request& r, const Comm& c, const void* buf, int count, MPI_Datatype type, int dest, int tag,
                bool synchronous);
// A new MPI request handle for r.
MPI_Request add_request(std::unique_ptr<Request> r);
// Finishes r (waiting as wait_hcomm does) and fills status (may be
// MPI_STATUS_IGNORE); errors as Error.
void wait_request(Request& r, MPI_Status* status, const char* fn);
// Whether r is done, without moving the layer's progress (progress() does).
bool is_done(Request& r, const char* fn);
// Runs r's last step once it is done: its copy, its release.
void complete(Request& r);
// Fills status (may be MPI_STATUS_IGNORE) from a completed r; its error as Error.
void report(const Request& r, MPI_Status* status);
// A receive still waiting for its envelope stops waiting and is marked
// cancelled; false once it has matched a message (p2p.cpp).
bool cancel_receive(Request& r);
// Completes the requests MPI_Request_free let go of that are done; with
// wait, waits for all of them (MPI_Finalize).
bool complete_freed(const char* fn, bool wait);
// Hands r to the requests completed in the background (freed ones, buffered
// sends): it finishes on its own, and is deleted then.
void add_freed(std::unique_ptr<Request> r);

// MPICH's MPI_Status keeps the byte count in two ints and the cancelled flag.
void set_count(MPI_Status& s, MPI_Count bytes);
MPI_Count count_of(const MPI_Status& s);
void set_cancelled(MPI_Status& s, bool cancelled);
// The status of a request that got nothing (MPI_PROC_NULL, MPI_REQUEST_NULL).
void empty_status(MPI_Status* status);

}  // namespace hcomm::mpi
