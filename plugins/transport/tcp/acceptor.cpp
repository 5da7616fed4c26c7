#include "acceptor.hpp"

#include <cstring>
#include <utility>

#include "endpoint.hpp"
#include "hcomm/plugin/pending.hpp"
#include "net.hpp"

namespace hcomm::tcp {

using plugin::format;

namespace {

// A connecting rank sends its hello right after connecting, and its proof
// right after the challenge: a socket silent this long is not one of ours.
constexpr std::chrono::seconds kHelloDeadline{5};
constexpr int kAcceptsPerEvent = 64;

}  // namespace

// An accepted socket until its handshake ends: its hello, then (once
// challenged) its proof.
class Acceptor::PendingHello final : public EventHandler {
 public:
  PendingHello(Acceptor& acceptor, Socket socket, const InetAddress& from)
      : acceptor_(acceptor), socket_(std::move(socket)), from_(from), deadline_(Clock::now() + kHelloDeadline) {
    acceptor_.net_.poller().add(socket_.fd(), this, EPOLLIN);
  }
  ~PendingHello() override { release(); }

  void on_events(uint32_t) override {
    if (!socket_.valid()) return;
    auto* base = challenged_ ? reinterpret_cast<std::byte*>(proof_.data()) : reinterpret_cast<std::byte*>(&hello_);
    const size_t size = challenged_ ? sizeof proof_ : sizeof hello_;
    iovec iov{base + done_, size - done_};
    IoResult r = socket_.recv({&iov, 1});
    if (r.eof)
      return acceptor_.drop(*this, challenged_ ? "it closed during the handshake" : "it closed before saying hello");
    if (r.error) {
      if (!r.would_block()) acceptor_.drop(*this, std::strerror(r.error));
      return;
    }
    done_ += r.bytes;
    if (done_ < size) return;
    done_ = 0;
    if (challenged_) return acceptor_.admit(*this);
    acceptor_.challenge(*this);
  }

  // The first bytes sent on the socket: an empty socket buffer takes them.
  bool send_challenge(const wire::Challenge& challenge) {
    iovec iov{const_cast<wire::Challenge*>(&challenge), sizeof challenge};
    if (socket_.send({&iov, 1}).bytes != sizeof challenge) return false;
    nonce_ = challenge.nonce;
    challenged_ = true;
    return true;
  }

  bool finished() const { return !socket_.valid(); }
  // What the eviction policy (hcomm/plugin/pending.hpp) needs to know.
  plugin::PendingState state() const { return {.open = !finished(), .silent = !challenged_, .source = from_.ip}; }
  Clock::time_point deadline() const { return deadline_; }
  const InetAddress& from() const { return from_; }
  const wire::Hello& hello() const { return hello_; }
  const wire::auth::Nonce& nonce() const { return nonce_; }
  const wire::Proof& proof() const { return proof_; }

  // Unregisters the socket and gives it away (an empty one, once finished).
  Socket release() {
    if (socket_.valid()) acceptor_.net_.poller().remove(socket_.fd());
    return std::move(socket_);
  }

 private:
  Acceptor& acceptor_;
  Socket socket_;
  InetAddress from_;
  Clock::time_point deadline_;
  wire::Hello hello_{};
  bool challenged_ = false;
  wire::auth::Nonce nonce_{};  // the acceptor's, sent in the challenge
  wire::Proof proof_{};
  size_t done_ = 0;  // bytes of the hello, then of the proof
};

Acceptor::Acceptor(Net& net, const InetAddress& where)
    : net_(net), listener_(Socket::listen_on(where, net.sockbuf())), address_(listener_.local_address()) {
  net_.poller().add(listener_.fd(), this, EPOLLIN);
}

Acceptor::~Acceptor() {
  pending_.clear();
  net_.poller().remove(listener_.fd());
}

std::vector<Acceptor::Arrival> Acceptor::take_early(int rank) {
  auto it = early_.find(rank);
  if (it == early_.end()) return {};
  std::vector<Arrival> arrivals = std::move(it->second);
  early_.erase(it);
  return arrivals;
}

void Acceptor::on_events(uint32_t) {
  auto state_of = [](const std::unique_ptr<PendingHello>& pending) { return pending->state(); };
  for (int i = 0; i < kAcceptsPerEvent; ++i) {
    InetAddress from;
    int error = 0;
    Socket socket = listener_.accept(&from, &error);
    if (!socket.valid()) {
      if (error == EAGAIN || error == EWOULDBLOCK) return;
      if (error == ECONNABORTED || error == EINTR || error == EPROTO) continue;  // that client gave up
      // Out of descriptors: the oldest unidentified socket gives its own up.
      if ((error == EMFILE || error == ENFILE) &&
          evict(plugin::oldest_pending(pending_.begin(), pending_.end(), state_of,
                                       [](const plugin::PendingState&) { return true; })))
        continue;
      HCOMM_PLUGIN_LOG_LIMITED(net_.services(), HCOMM_LOG_WARN, "NET", "tcp: cannot accept connections on %s: %s",
                               address_.str().c_str(), std::strerror(error));
      return;
    }
    evict(plugin::pending_to_drop(pending_.begin(), pending_.end(), from.ip, plugin::kPendingLimits, state_of));
    try {
      socket.set_nodelay();
      pending_.push_back(std::make_unique<PendingHello>(*this, std::move(socket), from));
      pending_.back()->on_events(EPOLLIN);  // a rank's hello is often there already
    } catch (const plugin::Error& e) {
      HCOMM_PLUGIN_LOG_LIMITED(net_.services(), HCOMM_LOG_WARN, "NET", "tcp: dropped connection from %s: %s",
                               from.str().c_str(), e.what());
    }
  }
}

void Acceptor::expire(Clock::time_point now) {
  if (pending_.empty()) return;
  for (auto& pending : pending_)
    if (!pending->finished() && now >= pending->deadline())
      drop(*pending, format("no hello within %lld s", static_cast<long long>(kHelloDeadline.count())));
  std::erase_if(pending_, [](const auto& pending) { return pending->finished(); });
}

std::optional<Clock::time_point> Acceptor::next_deadline() const {
  std::optional<Clock::time_point> next;
  for (const auto& pending : pending_)
    if (!pending->finished() && (!next || pending->deadline() < *next)) next = pending->deadline();
  return next;
}

void Acceptor::challenge(PendingHello& pending) {
  if (auto why = refusal(pending.hello())) return drop(pending, *why);
  wire::Challenge challenge{};
  if (!wire::auth::fresh_nonce(&challenge.nonce) ||
      !wire::acceptor_proof(net_.key(), pending.hello(), challenge.nonce, net_.rank(), &challenge.proof))
    return drop(pending, "no challenge could be made (getrandom or libcrypto failed)");
  if (!pending.send_challenge(challenge)) drop(pending, "its socket did not take the challenge");
}

void Acceptor::admit(PendingHello& pending) {
  wire::Proof expected{};
  if (!wire::initiator_proof(net_.key(), pending.hello(), pending.nonce(), &expected) ||
      !wire::auth::same_mac(pending.proof(), expected))
    return drop(pending, "it did not prove the communicator's key");
  int rank = pending.hello().rank;
  int index = pending.hello().socket_index;
  Socket socket = pending.release();
  if (Endpoint* endpoint = net_.endpoint_for(rank))
    endpoint->adopt(index, std::move(socket), pending.from());
  else
    early_[rank].push_back(Arrival{index, std::move(socket), pending.from()});
}

std::optional<std::string> Acceptor::refusal(const wire::Hello& hello) const {
  if (hello.magic != wire::kHelloMagic || hello.version != wire::kVersion)
    return format("not an HComm tcp hello of wire version %u", wire::kVersion);
  if (hello.rank < 0 || hello.rank >= net_.nranks())
    return format("it claims rank %d, outside the communicator of %d ranks", hello.rank, net_.nranks());
  if (hello.rank >= net_.rank())
    return format("rank %d may not connect to rank %d: the lower rank of a pair connects", hello.rank, net_.rank());
  return std::nullopt;
}

bool Acceptor::evict(Pending::iterator victim) {
  if (victim == pending_.end()) return false;
  drop(**victim, "dropped to make room for a newer connection: too many wait for their handshake");
  return true;
}

void Acceptor::drop(PendingHello& pending, const std::string& why) {
  pending.release();
  HCOMM_PLUGIN_LOG_LIMITED(net_.services(), HCOMM_LOG_WARN, "NET", "tcp: dropped connection from %s: %s",
                           pending.from().str().c_str(), why.c_str());
}

}  // namespace hcomm::tcp
