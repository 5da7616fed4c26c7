// MPI requests: a set of HComm requests to finish, and for receives the
// envelope step of the point-to-point protocol (p2p.cpp).
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

struct Request {
  MPI_Comm comm = MPI_COMM_NULL;
  std::vector<hcomm_request_t> hcomm;  // to finish, in any order; null once done
  std::function<void()> then;          // once they are done: a copy into place
  MPI_Status status{};                 // what a receive got
  // Receives: the envelope to wait for, then where the message goes.
  bool receive = false;
  bool awaiting_envelope = false;
  hcomm_request_t envelope_request = nullptr;
  void* buf = nullptr;
  size_t capacity = 0;
  int peer = MPI_PROC_NULL, tag = 0;  // of a send or a receive
  Envelope envelope;
  std::vector<unsigned char> overflow;  // a truncated message's bytes
  unsigned char ack = 0;
  std::vector<size_t> counts;  // layouts an HComm v-collective reads while it runs
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

// A new MPI request handle for r.
MPI_Request add_request(std::unique_ptr<Request> r);
// Finishes r (waiting as wait_hcomm does) and fills status (may be
// MPI_STATUS_IGNORE); errors as Error.
void wait_request(Request& r, MPI_Status* status, const char* fn);

}  // namespace hcomm::mpi
