#include "acceptor.hpp"

#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "hcomm/plugin/pending.hpp"
#include "hcomm/plugin/util.hpp"

namespace hcomm::verbs {

using plugin::format;

namespace {

// What the eviction policy (hcomm/plugin/pending.hpp) needs to know: every
// listed connection is open; one not yet challenged has said nothing valid.
template <class P>
plugin::PendingState state_of(const P& p) {
  return {.open = true, .silent = !p.challenged, .source = p.source};
}

}  // namespace

Acceptor::Acceptor(const Key& key, int rank, int nranks, uint32_t ip)
    : key_(key), rank_(rank), nranks_(nranks), listener_(listen_on(ip, &port_)) {}

void Acceptor::watched_fds(std::vector<int>* fds) const {
  fds->push_back(listener_.get());
  for (const Pending& p : pending_) fds->push_back(p.channel.fd());
}

Acceptor::Progress Acceptor::poll() {
  Progress progress;
  accept_new(&progress);
  const Clock::time_point now = Clock::now();
  for (auto it = pending_.begin(); it != pending_.end();) {
    std::string why;
    bool ended = false;
    try {
      ended = step(*it, &progress.admitted);
      if (!ended && now > it->deadline)
        why = format("its handshake did not end within %lld s", static_cast<long long>(kHandshakeDeadline.count()));
    } catch (const std::exception& e) {
      why = e.what();
    }
    if (!why.empty())
      it = drop(it, why, &progress);
    else if (ended)
      it = pending_.erase(it);
    else
      ++it;
  }
  return progress;
}

void Acceptor::accept_new(Progress* progress) {
  for (;;) {
    sockaddr_in from{};
    socklen_t len = sizeof from;
    const int fd = ::accept4(listener_.get(), reinterpret_cast<sockaddr*>(&from), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      const int error = errno;
      if (error == EAGAIN || error == EWOULDBLOCK) return;
      if (error == EINTR || error == ECONNABORTED || error == EPROTO) continue;  // that client gave up
      // Out of descriptors: the oldest unidentified connection gives its own up.
      if (error == EMFILE || error == ENFILE) {
        auto victim = plugin::oldest_pending(pending_.begin(), pending_.end(), state_of<Pending>,
                                             [](const plugin::PendingState&) { return true; });
        if (victim != pending_.end()) {
          drop(victim, "dropped to make room for a newer connection: out of file descriptors", progress);
          continue;
        }
      }
      progress->warnings.push_back(format("cannot accept side channels on port %u: %s", port_, std::strerror(error)));
      return;
    }
    auto victim = plugin::pending_to_drop(pending_.begin(), pending_.end(), from.sin_addr.s_addr,
                                          plugin::kPendingLimits, state_of<Pending>);
    if (victim != pending_.end())
      drop(victim, "dropped to make room for a newer connection: too many wait for their handshake", progress);
    pending_.push_back(Pending{.channel = Channel(Fd(fd)),
                               .source = from.sin_addr.s_addr,
                               .from = inet_str(from.sin_addr.s_addr, ntohs(from.sin_port)),
                               .deadline = Clock::now() + kHandshakeDeadline});
  }
}

bool Acceptor::step(Pending& p, std::vector<Admitted>* admitted) {
  p.channel.flush();
  if (!p.challenged) {
    if (!p.channel.fill(Hello::kBytes)) return false;
    const std::vector<uint8_t> bytes = p.channel.take(Hello::kBytes);
    std::copy(bytes.begin(), bytes.end(), p.request.begin());
    if (std::string why = refusal(Hello::decode(p.request.data(), p.request.size())); !why.empty())
      throw std::runtime_error(why);
    challenge(p);
    return false;
  }
  if (!p.channel.fill(sizeof(auth::Mac))) return false;
  const std::vector<uint8_t> bytes = p.channel.take(sizeof(auth::Mac));
  auth::Mac proof{};
  std::copy(bytes.begin(), bytes.end(), proof.begin());
  auth::Mac expected{};
  if (!initiator_proof(key_, p.request, p.nonce, &expected))
    throw std::runtime_error("libcrypto failed to compute HMAC-SHA256");
  if (!auth::same_mac(proof, expected)) throw std::runtime_error("it did not prove the communicator's key");
  admitted->push_back(
      Admitted{.channel = std::move(p.channel), .hello = Hello::decode(p.request.data(), p.request.size())});
  return true;
}

void Acceptor::challenge(Pending& p) {
  Challenge c{};
  if (!auth::fresh_nonce(&c.nonce) || !acceptor_proof(key_, p.request, c.nonce, rank_, &c.proof))
    throw std::runtime_error("no challenge could be made (getrandom or libcrypto failed)");
  const Challenge::Bytes bytes = c.encode();
  p.channel.send(bytes.data(), bytes.size());
  p.nonce = c.nonce;
  p.challenged = true;
}

std::string Acceptor::refusal(const Hello& hello) const {
  if (hello.kind != Hello::Kind::kRequest) return "its hello is a reply, not a request";
  if (hello.rank >= nranks_)
    return format("it claims rank %d, outside the communicator of %d ranks", hello.rank, nranks_);
  if (hello.rank >= rank_)
    return format("rank %d may not connect to rank %d: the lower rank of a pair connects", hello.rank, rank_);
  return "";
}

Acceptor::PendingList::iterator Acceptor::drop(PendingList::iterator victim, const std::string& why,
                                               Progress* progress) {
  progress->warnings.push_back(format("dropped a side channel from %s: %s", victim->from.c_str(), why.c_str()));
  return pending_.erase(victim);
}

}  // namespace hcomm::verbs
