#include "example_net.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <algorithm>
#include <cstdint>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <utility>

namespace example {

using hcomm::plugin::format;

namespace {

constexpr int kSocketFlags = SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC;
constexpr int kSendFlags = MSG_NOSIGNAL | MSG_DONTWAIT;  // a dead peer is an error code, not SIGPIPE
constexpr size_t kDiscardChunk = 64 * 1024;

[[noreturn]] void throw_errno(const char* what) {
  HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "example: %s failed: %s", what, std::strerror(errno));
}

Fd new_socket() {
  Fd fd(::socket(AF_UNIX, kSocketFlags, 0));
  if (!fd) throw_errno("socket(AF_UNIX)");
  return fd;
}

// The peers this socket reaches share the boot and the network namespace.
std::string host_identity() {
  std::string boot_id;
  std::getline(std::ifstream("/proc/sys/kernel/random/boot_id"), boot_id);
  struct stat ns {};
  if (::stat("/proc/self/ns/net", &ns) != 0) throw_errno("stat(/proc/self/ns/net)");
  return boot_id + "/" + std::to_string(ns.st_ino);
}

Address listening_address(int listener) {
  sockaddr_un sa{};
  socklen_t len = sizeof sa;
  if (::getsockname(listener, reinterpret_cast<sockaddr*>(&sa), &len) != 0) throw_errno("getsockname");
  Address a{};
  std::snprintf(a.host, sizeof a.host, "%s", host_identity().c_str());
  a.name_len = static_cast<uint32_t>(len - offsetof(sockaddr_un, sun_path));
  std::memcpy(a.name, sa.sun_path, a.name_len);
  return a;
}

bool would_block() { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR; }

// Who is at the other end of an accepted connection: its user (the source
// that pending connections are bounded by) and, for the log, its process.
std::pair<uint32_t, std::string> peer_process(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return {UINT32_MAX, "an unknown process"};
  return {cred.uid, format("pid %d (uid %u)", static_cast<int>(cred.pid), static_cast<unsigned>(cred.uid))};
}

static_assert(sizeof(Hello) == 20 && sizeof(Challenge) == 48, "handshake messages go on the wire as they are");

}  // namespace

bool accepting_proof(const Key& key, const Hello& hello, const auth::Nonce& nonce, int32_t accepting_rank,
                     auth::Mac* out) {
  return auth::mac(
      key, {auth::label("hcomm example accepting"), auth::bytes_of(hello), nonce, auth::bytes_of(accepting_rank)}, out);
}

bool connecting_proof(const Key& key, const Hello& hello, const auth::Nonce& nonce, auth::Mac* out) {
  return auth::mac(key, {auth::label("hcomm example connecting"), auth::bytes_of(hello), nonce}, out);
}

Address decode_address(const void* blob, size_t len, const char* what) {
  Address a{};
  if (!blob || len != sizeof a)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "example: %s: %zu bytes, expected an address of %zu bytes", what,
                       len, sizeof a);
  std::memcpy(&a, blob, sizeof a);
  if (a.name_len < 2 || a.name_len > sizeof a.name || a.name[0] != '\0' || !std::memchr(a.host, '\0', sizeof a.host))
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "example: %s is not an address of this transport", what);
  return a;
}

// Figures typical of a local socket: below shared memory, so that shm keeps
// the pairs it serves when both are loaded. A real transport puts what it
// measured (benchmarks/transport_bench) or its link's speed from the blobs.
hcomm_link_score_t score_link(const Address& local, const Address& peer) {
  bool same_host = std::strcmp(local.host, peer.host) == 0;
  return {.reachable = same_host, .bandwidth_gbps = same_host ? 4.0 : 0.0, .latency_us = same_host ? 5.0 : 0.0};
}

// ---- Endpoint ---------------------------------------------------------------

// The lower rank of a pair connects, the higher one accepts: both know who
// does what from the ranks alone, and connect never waits for the other.
Endpoint::Endpoint(Net& net, int peer, const Address& address)
    : net_(net),
      peer_(peer),
      address_(address),
      state_(net.rank() < peer ? State::kConnecting : State::kAccepting),
      into_unexpected_(unexpected_.end()) {
  if (state_ == State::kConnecting) try_connect();
}

bool Endpoint::ready() {
  if (state_ != State::kReady && state_ != State::kFailed) net_.progress();
  if (state_ == State::kFailed) HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE, "%s", error_.c_str());
  return state_ == State::kReady;
}

Request& Endpoint::add(bool is_send, const void* buf, size_t len, uint64_t tag) {
  Request& r = live_.emplace_back(Request{
      .is_send = is_send, .buf = static_cast<uint8_t*>(const_cast<void*>(buf)), .len = len, .tag = tag, .owner = this});
  r.self = std::prev(live_.end());
  return r;
}

Request* Endpoint::isend(const void* buf, size_t len, uint64_t tag) {
  if (state_ == State::kFailed) HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE, "%s", error_.c_str());
  if (live_sends_ >= static_cast<size_t>(net_.max_sends())) return nullptr;
  Request& r = add(true, buf, len, tag);
  ++live_sends_;
  sends_.push_back(&r);
  if (state_ == State::kReady) write_sends();  // most small messages leave at once
  return &r;
}

Request* Endpoint::irecv(void* buf, size_t len, uint64_t tag) {
  // Receives are never refused: a rank whose every slot held a receive could
  // post no send, and two such ranks would wait for each other forever.
  // A message that arrived first matches before any later one of its tag,
  // even once the link failed: what the peer sent before it left is data.
  auto message = std::find_if(unexpected_.begin(), unexpected_.end(),
                              [&](const Unexpected& u) { return u.tag == tag && !u.claimed; });
  if (message == unexpected_.end() && state_ == State::kFailed)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE, "%s", error_.c_str());
  Request& r = add(false, buf, len, tag);
  if (message == unexpected_.end()) {
    receives_.push_back(&r);
    return &r;
  }
  message->claimed = &r;
  if (message->got == message->data.size()) finish_unexpected(message);
  return &r;
}

bool Endpoint::test(Request* request, size_t* bytes) {
  if (!request->done) return false;
  Request finished = std::move(*request);
  live_.erase(finished.self);
  live_sends_ -= finished.is_send ? 1 : 0;
  if (finished.status != HCOMM_SUCCESS) throw hcomm::plugin::Error(finished.status, finished.error);
  *bytes = finished.len;
  return true;
}

void Endpoint::adopt(Fd fd) {
  fd_ = std::move(fd);
  state_ = State::kReady;
}

void Endpoint::progress() {
  if (state_ == State::kConnecting) try_connect();
  if (state_ == State::kHello && send_handshake(&hello_, sizeof hello_)) state_ = State::kChallenge;
  if (state_ == State::kChallenge && recv_handshake(&challenge_, sizeof challenge_)) answer_challenge();
  if (state_ == State::kProof && send_handshake(proof_.data(), proof_.size())) state_ = State::kReady;
  if (state_ == State::kReady) write_sends();
  if (state_ == State::kReady) read_messages();
}

void Endpoint::try_connect() {
  if (!fd_) fd_ = new_socket();
  sockaddr_un sa{.sun_family = AF_UNIX, .sun_path = {}};
  std::memcpy(sa.sun_path, address_.name, address_.name_len);
  socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + address_.name_len);
  if (::connect(fd_.get(), reinterpret_cast<const sockaddr*>(&sa), len) != 0) {
    if (!would_block())  // EAGAIN: the peer's backlog is full, try again on progress
      fail_link(format("cannot connect (%s): the process ended or closed its net", std::strerror(errno)));
    return;
  }
  hello_ = Hello{.rank = net_.rank(), .nonce = {}};
  if (!auth::fresh_nonce(&hello_.nonce))
    return fail_link(format("cannot be greeted: getrandom failed (%s)", std::strerror(errno)));
  state_ = State::kHello;
}

bool Endpoint::send_handshake(const void* message, size_t size) {
  ssize_t n =
      ::send(fd_.get(), static_cast<const uint8_t*>(message) + handshake_done_, size - handshake_done_, kSendFlags);
  if (n < 0 && would_block()) return false;
  if (n < 0) {
    fail_link(format("connection lost during the handshake (%s)", std::strerror(errno)));
    return false;
  }
  handshake_done_ += static_cast<size_t>(n);
  if (handshake_done_ < size) return false;
  handshake_done_ = 0;
  return true;
}

bool Endpoint::recv_handshake(void* message, size_t size) {
  ssize_t n = ::recv(fd_.get(), static_cast<uint8_t*>(message) + handshake_done_, size - handshake_done_, MSG_DONTWAIT);
  if (n < 0 && would_block()) return false;
  if (n <= 0) {
    fail_link(n == 0 ? "closed the connection during the handshake: it is of another communicator, or it ended"
                     : format("connection lost during the handshake (%s)", std::strerror(errno)));
    return false;
  }
  handshake_done_ += static_cast<size_t>(n);
  if (handshake_done_ < size) return false;
  handshake_done_ = 0;
  return true;
}

// The accepting side must prove the key as the rank this endpoint meant to
// reach; then this side proves it.
void Endpoint::answer_challenge() {
  auth::Mac expected{};
  if (!accepting_proof(net_.key(), hello_, challenge_.nonce, peer_, &expected) ||
      !connecting_proof(net_.key(), hello_, challenge_.nonce, &proof_))
    return fail_link("cannot be greeted: libcrypto failed to compute HMAC-SHA256");
  if (!auth::same_mac(challenge_.proof, expected))
    return fail_link("did not prove this communicator's key: the address is of another communicator or rank");
  state_ = State::kProof;
}

void Endpoint::write_sends() {
  while (!sends_.empty()) {
    Request& r = *sends_.front();
    Frame frame{.tag = r.tag, .len = r.len};
    iovec iov[2];
    int count = 0;
    if (r.moved < sizeof frame) iov[count++] = {reinterpret_cast<uint8_t*>(&frame) + r.moved, sizeof frame - r.moved};
    size_t payload_sent = r.moved > sizeof frame ? r.moved - sizeof frame : 0;
    if (payload_sent < r.len) iov[count++] = {r.buf + payload_sent, r.len - payload_sent};
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = count;
    ssize_t n = ::sendmsg(fd_.get(), &msg, kSendFlags);
    if (n < 0 && would_block()) return;
    if (n < 0) return fail_link(format("connection lost (%s)", std::strerror(errno)));
    r.moved += static_cast<size_t>(n);
    if (r.moved == sizeof frame + r.len) {
      r.done = true;  // the buffer is the caller's again
      sends_.pop_front();
    }
  }
}

// Reads until the socket is empty: headers, then payloads in place.
void Endpoint::read_messages() {
  for (;;) {
    if (!in_payload_) {
      ssize_t n =
          ::recv(fd_.get(), reinterpret_cast<uint8_t*>(&frame_) + frame_got_, sizeof frame_ - frame_got_, MSG_DONTWAIT);
      if (!got_bytes(n)) return;
      frame_got_ += static_cast<size_t>(n);
      if (frame_got_ < sizeof frame_) continue;
      frame_got_ = 0;
      start_payload();
      if (payload_left_ == 0) end_payload();
      continue;
    }
    uint8_t* into;
    if (into_request_) {
      into = into_request_->buf + into_request_->moved;
    } else if (into_unexpected_ != unexpected_.end()) {
      into = into_unexpected_->data.data() + into_unexpected_->got;
    } else {
      discard_.resize(kDiscardChunk);
      into = discard_.data();
    }
    size_t want =
        into_request_ || into_unexpected_ != unexpected_.end() ? payload_left_ : std::min(payload_left_, kDiscardChunk);
    ssize_t n = ::recv(fd_.get(), into, want, MSG_DONTWAIT);
    if (!got_bytes(n)) return;
    if (into_request_) into_request_->moved += static_cast<size_t>(n);
    if (into_unexpected_ != unexpected_.end()) into_unexpected_->got += static_cast<size_t>(n);
    payload_left_ -= static_cast<size_t>(n);
    if (payload_left_ == 0) end_payload();
  }
}

// False when nothing came: the socket is empty, or the link failed.
bool Endpoint::got_bytes(ssize_t n) {
  if (n > 0) return true;
  if (n == 0)
    fail_link("closed the connection: the process ended or closed its endpoint");
  else if (!would_block())
    fail_link(format("connection lost (%s)", std::strerror(errno)));
  return false;
}

// A header is in: the first posted receive of its tag takes the payload,
// else it waits as an unexpected message.
void Endpoint::start_payload() {
  in_payload_ = true;
  payload_left_ = frame_.len;
  auto receive = std::find_if(receives_.begin(), receives_.end(), [&](Request* r) { return r->tag == frame_.tag; });
  if (receive == receives_.end()) {
    into_unexpected_ = unexpected_.insert(unexpected_.end(), Unexpected{.tag = frame_.tag, .data = {}});
    into_unexpected_->data.resize(frame_.len);
    return;
  }
  Request& r = **receive;
  receives_.erase(receive);
  if (frame_.len > r.len) {  // the payload is read past, and the receive fails
    r.done = true;
    r.status = HCOMM_ERR_INVALID_ARGUMENT;
    r.error =
        format("example: the message from rank %d (tag 0x%llx) has %llu bytes, more than the receive's %zu", peer_,
               static_cast<unsigned long long>(frame_.tag), static_cast<unsigned long long>(frame_.len), r.len);
    return;
  }
  r.len = frame_.len;
  into_request_ = &r;
}

void Endpoint::end_payload() {
  if (into_request_) into_request_->done = true;
  if (into_unexpected_ != unexpected_.end()) finish_unexpected(into_unexpected_);
  in_payload_ = false;
  into_request_ = nullptr;
  into_unexpected_ = unexpected_.end();
}

// A whole unexpected message with a receive: copied out, or refused if it
// does not fit.
void Endpoint::finish_unexpected(std::list<Unexpected>::iterator message) {
  Request* r = message->claimed;
  if (!r) return;  // waits for its receive
  if (message->data.size() > r->len) {
    r->status = HCOMM_ERR_INVALID_ARGUMENT;
    r->error = format("example: the message from rank %d (tag 0x%llx) has %zu bytes, more than the receive's %zu",
                      peer_, static_cast<unsigned long long>(message->tag), message->data.size(), r->len);
  } else {
    std::copy(message->data.begin(), message->data.end(), r->buf);
    r->len = message->data.size();
  }
  r->done = true;
  unexpected_.erase(message);
}

// The peer is gone: every unfinished request fails with its rank named, and
// whole messages that arrived before stay receivable.
void Endpoint::fail_link(const std::string& why) {
  error_ = format("example: rank %d %s", peer_, why.c_str());
  net_.services().log(HCOMM_LOG_INFO, "NET", error_);
  state_ = State::kFailed;
  fd_.reset();
  for (Request& r : live_) {
    if (r.done) continue;
    r.done = true;
    r.status = HCOMM_ERR_REMOTE;
    r.error = error_;
  }
  sends_.clear();
  receives_.clear();
  std::erase_if(unexpected_, [](const Unexpected& u) { return u.got < u.data.size() || u.claimed; });
  in_payload_ = false;
  into_request_ = nullptr;
  into_unexpected_ = unexpected_.end();
}

// ---- Net --------------------------------------------------------------------

Net::Net(const Services& services, int max_sends, const hcomm_transport_open_args_t& args)
    : services_(services),
      max_sends_(max_sends),
      rank_(args.rank),
      nranks_(args.nranks),
      listener_(new_socket()),
      endpoints_(static_cast<size_t>(args.nranks)),
      arrived_(static_cast<size_t>(args.nranks)) {
  std::copy(std::begin(args.comm_key), std::end(args.comm_key), key_.begin());
  // Binding the family alone makes the kernel pick a unique abstract name
  // ("autobind"): nothing on the file system, nothing left behind.
  sa_family_t family = AF_UNIX;
  if (::bind(listener_.get(), reinterpret_cast<const sockaddr*>(&family), sizeof family) != 0) throw_errno("bind");
  if (::listen(listener_.get(), SOMAXCONN) != 0) throw_errno("listen");
  address_ = listening_address(listener_.get());
}

Endpoint& Net::connect(int peer, const Address& address) {
  if (peer < 0 || peer >= nranks_ || peer == rank_)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "example: connect: peer_rank %d; give another rank from 0 to %d",
                       peer, nranks_ - 1);
  auto& endpoint = endpoints_[static_cast<size_t>(peer)];
  if (endpoint)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                       "example: connect: rank %d has an endpoint already; ep_close it first", peer);
  endpoint = std::make_unique<Endpoint>(*this, peer, address);
  if (Fd& fd = arrived_[static_cast<size_t>(peer)]) endpoint->adopt(std::move(fd));
  return *endpoint;
}

void Net::close_endpoint(Endpoint& endpoint) {
  auto& slot = endpoints_[static_cast<size_t>(endpoint.peer())];
  if (slot.get() != &endpoint)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "example: ep_close: the endpoint is not one of this net's");
  slot.reset();  // its socket closes: the peer sees the end after the data already sent
}

void Net::progress() {
  accept_all();
  handshakes();
  for (auto& endpoint : endpoints_)
    if (endpoint) endpoint->progress();
}

void Net::accept_all() {
  for (;;) {
    Fd fd(::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd) {
      if (would_block() || errno == ECONNABORTED) return;
      throw_errno("accept4");
    }
    auto [source, from] = peer_process(fd.get());
    // Anyone who can reach the socket may connect and say nothing: the
    // oldest pending connection beyond a bound makes room for the newcomer.
    auto drop = hcomm::plugin::pending_to_drop(pending_.begin(), pending_.end(), source, hcomm::plugin::kPendingLimits,
                                               [](const Pending& p) { return p.state(); });
    if (drop != pending_.end()) {
      HCOMM_PLUGIN_LOG_LIMITED(services_, HCOMM_LOG_WARN, "NET",
                               "example: dropped a pending connection from %s: too many are waiting for a handshake",
                               drop->from.c_str());
      pending_.erase(drop);
    }
    pending_.push_back(Pending{.fd = std::move(fd), .source = source, .from = std::move(from)});
  }
}

void Net::handshakes() {
  for (auto it = pending_.begin(); it != pending_.end();) it = step(*it) ? pending_.erase(it) : std::next(it);
}

bool Net::step(Pending& p) {
  for (;;) {
    auto* into = p.challenged ? p.proof.data() : reinterpret_cast<uint8_t*>(&p.hello);
    const size_t size = p.challenged ? sizeof p.proof : sizeof p.hello;
    ssize_t n = ::recv(p.fd.get(), into + p.got, size - p.got, MSG_DONTWAIT);
    if (n < 0 && would_block()) return false;
    if (n <= 0) return true;  // the stranger left: forget it
    if ((p.got += static_cast<size_t>(n)) < size) continue;
    p.got = 0;
    const bool proved = p.challenged;
    const std::string refused = proved ? admit(p) : challenge(p);
    if (!refused.empty())
      HCOMM_PLUGIN_LOG_LIMITED(services_, HCOMM_LOG_WARN, "NET", "example: refused a connection from %s: %s",
                               p.from.c_str(), refused.c_str());
    if (proved || !refused.empty()) return true;  // its descriptor closes with it unless admitted
  }
}

std::string Net::challenge(Pending& p) {
  if (std::string why = refusal(p.hello); !why.empty()) return why;
  Challenge c{};
  if (!auth::fresh_nonce(&c.nonce) || !accepting_proof(key_, p.hello, c.nonce, rank_, &c.proof))
    return "no challenge could be made (getrandom or libcrypto failed)";
  // The first bytes this side sends: the empty socket buffer takes them whole.
  if (::send(p.fd.get(), &c, sizeof c, kSendFlags) != static_cast<ssize_t>(sizeof c))
    return "its socket did not take the challenge";
  p.nonce = c.nonce;
  p.challenged = true;
  return "";
}

// Only a rank of this communicator gets in: a lower one (they connect, this
// side accepts) that proved the key and is not connected yet.
std::string Net::refusal(const Hello& hello) const {
  if (hello.rank < 0 || hello.rank >= rank_)
    return format("rank %d does not connect to rank %d (the lower rank of a pair connects)", hello.rank, rank_);
  return "";
}

std::string Net::admit(Pending& p) {
  auth::Mac expected{};
  if (!connecting_proof(key_, p.hello, p.nonce, &expected) || !auth::same_mac(p.proof, expected))
    return "it did not prove the communicator's key";
  const auto from = static_cast<size_t>(p.hello.rank);
  auto& endpoint = endpoints_[from];
  if (arrived_[from] || (endpoint && endpoint->state() != Endpoint::State::kAccepting))
    return format("rank %d is connected already", p.hello.rank);
  if (endpoint)
    endpoint->adopt(std::move(p.fd));
  else
    arrived_[from] = std::move(p.fd);
  return "";
}

// Sleeps until a socket has something for progress, or the timeout.
void Net::wait(int64_t timeout_us) {
  std::vector<pollfd> fds{{.fd = listener_.get(), .events = POLLIN, .revents = 0}};
  for (const Pending& p : pending_) fds.push_back({.fd = p.fd.get(), .events = POLLIN, .revents = 0});
  for (const auto& endpoint : endpoints_) {
    if (!endpoint) continue;
    if (endpoint->state() == Endpoint::State::kConnecting) timeout_us = std::min<int64_t>(timeout_us, 1000);
    if (endpoint->state() == Endpoint::State::kConnecting || endpoint->fd() < 0) continue;
    short events = POLLIN | (endpoint->wants_write() ? POLLOUT : 0);
    fds.push_back({.fd = endpoint->fd(), .events = events, .revents = 0});
  }
  timespec timeout{.tv_sec = timeout_us / 1000000, .tv_nsec = timeout_us % 1000000 * 1000};
  if (::ppoll(fds.data(), fds.size(), &timeout, nullptr) < 0 && errno != EINTR) throw_errno("ppoll");
}

}  // namespace example
