// The example transport's objects: a Net per communicator, an Endpoint per
// peer, a Request per message. The medium is one Unix-domain stream socket
// per pair of ranks of one host; a vendor replaces the socket calls with the
// hardware's and keeps the rest (handshake, matching, retry, errors).
#pragma once

#include <unistd.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hcomm/plugin/auth.hpp"
#include "hcomm/plugin/pending.hpp"
#include "hcomm/plugin/transport.h"
#include "hcomm/plugin/util.hpp"

namespace example {

using hcomm::plugin::Services;
namespace auth = hcomm::plugin::auth;
using Key = std::array<uint8_t, 16>;

// The blob `address` publishes: the abstract socket name the net listens on,
// and the host it lives on (boot id and network namespace, since abstract
// names are per namespace).
struct Address {
  char host[64];
  uint32_t name_len;
  char name[108];  // leading NUL included
};
static_assert(sizeof(Address) <= HCOMM_TRANSPORT_MAX_ADDRESS);

// Checks a blob from the core; `what` names it in the error.
Address decode_address(const void* blob, size_t len, const char* what);
// Both sides compute it from the same two blobs, so they agree.
hcomm_link_score_t score_link(const Address& local, const Address& peer);

// The handshake, the first bytes on every connection. The communicator's key
// never travels: each side proves it over the other's fresh nonce
// (hcomm/plugin/auth.hpp, libcrypto), so a recorded handshake proves nothing
// on a new connection.
//
//   connecting side -> accepting side   Hello
//   accepting side -> connecting side   Challenge (its nonce, accepting_proof)
//   connecting side -> accepting side   connecting_proof
//
// The accepting side admits the connection only once that proof checks out.
struct Hello {
  int32_t rank;       // the connecting side's
  auth::Nonce nonce;  // the connecting side's
};
struct Challenge {
  auth::Nonce nonce;  // the accepting side's
  auth::Mac proof;    // accepting_proof
};
// The accepting side's proof names its rank, so that the connecting side
// also learns that it reached the rank it meant to. False only when
// libcrypto fails.
bool accepting_proof(const Key& key, const Hello& hello, const auth::Nonce& nonce, int32_t accepting_rank,
                     auth::Mac* out);
bool connecting_proof(const Key& key, const Hello& hello, const auth::Nonce& nonce, auth::Mac* out);

// A file descriptor closed with its owner.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    reset(std::exchange(other.fd_, -1));
    return *this;
  }
  ~Fd() { reset(); }
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

class Endpoint;

struct Request {
  bool is_send;
  uint8_t* buf;
  size_t len;  // send: the message; receive: the capacity, then the message once matched
  uint64_t tag;
  size_t moved = 0;  // send: header and payload bytes written; receive: payload bytes in place
  bool done = false;
  hcomm_result_t status = HCOMM_SUCCESS;
  std::string error;
  Endpoint* owner = nullptr;
  std::list<Request>::iterator self;  // where the owner keeps it, for test to free it
};

// The header in front of every message on the wire.
struct Frame {
  uint64_t tag;
  uint64_t len;
};

// A message that arrived before its receive was posted.
struct Unexpected {
  uint64_t tag;
  std::vector<uint8_t> data;
  size_t got = 0;
  Request* claimed = nullptr;  // its receive, posted while it was still arriving
};

class Net;

class Endpoint {
 public:
  // The connecting side goes kConnecting, kHello, kChallenge, kProof, kReady;
  // the accepting side waits in kAccepting until its net admits a connection.
  enum class State { kConnecting, kHello, kChallenge, kProof, kAccepting, kReady, kFailed };

  Endpoint(Net& net, int peer, const Address& address);
  Endpoint(const Endpoint&) = delete;  // requests point into it
  Endpoint& operator=(const Endpoint&) = delete;

  Net& net() const { return net_; }
  int peer() const { return peer_; }
  State state() const { return state_; }
  int fd() const { return fd_.get(); }
  bool wants_write() const { return state_ == State::kHello || state_ == State::kProof || !sends_.empty(); }

  bool ready();  // throws HCOMM_ERR_REMOTE once the link failed
  // isend's nullptr: this endpoint holds HCOMM_EXAMPLE_MAX_SENDS sends, retry later.
  Request* isend(const void* buf, size_t len, uint64_t tag);
  Request* irecv(void* buf, size_t len, uint64_t tag);
  // True once the request finished, and frees it; a failed one throws (and is freed).
  bool test(Request* request, size_t* bytes);

  void adopt(Fd fd);  // the accepting side: a connection whose peer proved the key
  void progress();

 private:
  Request& add(bool is_send, const void* buf, size_t len, uint64_t tag);
  void try_connect();
  // The bytes of one handshake message still to go, or to come: true once
  // all of it went (came); false for later, or once the link failed.
  bool send_handshake(const void* message, size_t size);
  bool recv_handshake(void* message, size_t size);
  void answer_challenge();
  void write_sends();
  void read_messages();
  bool got_bytes(ssize_t n);
  void start_payload();
  void end_payload();
  void finish_unexpected(std::list<Unexpected>::iterator message);
  void fail_link(const std::string& why);

  Net& net_;
  int peer_;
  Address address_;
  Fd fd_;
  State state_;
  Hello hello_{};
  Challenge challenge_{};
  auth::Mac proof_{};
  size_t handshake_done_ = 0;  // bytes of the current handshake message
  std::string error_;  // why the link failed

  std::list<Request> live_;           // every request that test has not freed
  size_t live_sends_ = 0;             // of them, sends
  std::list<Request*> sends_;         // in posting order; the front one is being written
  std::list<Request*> receives_;      // posted and unmatched, in posting order
  std::list<Unexpected> unexpected_;  // in arrival order

  // The message being read: its header, then its payload, which goes to a
  // receive, to an Unexpected, or nowhere (past a truncated receive).
  Frame frame_{};
  size_t frame_got_ = 0;
  size_t payload_left_ = 0;
  bool in_payload_ = false;
  Request* into_request_ = nullptr;
  std::list<Unexpected>::iterator into_unexpected_;
  std::vector<uint8_t> discard_;
};

class Net {
 public:
  Net(const Services& services, int max_sends, const hcomm_transport_open_args_t& args);
  Net(const Net&) = delete;  // endpoints point to it
  Net& operator=(const Net&) = delete;

  const Services& services() const { return services_; }
  int rank() const { return rank_; }
  int max_sends() const { return max_sends_; }
  const Address& address() const { return address_; }
  const Key& key() const { return key_; }

  Endpoint& connect(int peer, const Address& address);
  void close_endpoint(Endpoint& endpoint);
  void progress();
  void wait(int64_t timeout_us);

 private:
  // An accepted connection until its handshake ends: its hello, then (once
  // challenged) its proof.
  struct Pending {
    Fd fd;
    uint32_t source;   // its user: pending connections are bounded per user (hcomm/plugin/pending.hpp)
    std::string from;  // its process, for the log
    Hello hello{};
    bool challenged = false;
    auth::Nonce nonce{};  // this side's, sent in the challenge
    auth::Mac proof{};
    size_t got = 0;  // bytes of the hello, then of the proof
    hcomm::plugin::PendingState state() const { return {.open = true, .silent = !challenged, .source = source}; }
  };
  void accept_all();
  void handshakes();
  // Reads what `p` sent; true when its handshake ended (admitted or refused).
  bool step(Pending& p);
  // After the hello, and after the proof: why the connection is refused, or
  // "" when it goes on.
  std::string challenge(Pending& p);
  std::string admit(Pending& p);
  std::string refusal(const Hello& hello) const;

  const Services& services_;
  int max_sends_;
  int rank_;
  int nranks_;
  Key key_;
  Fd listener_;
  Address address_{};
  std::vector<std::unique_ptr<Endpoint>> endpoints_;  // by peer rank
  std::vector<Fd> arrived_;                           // by peer rank: admitted before this side called connect
  std::list<Pending> pending_;
};

}  // namespace example
