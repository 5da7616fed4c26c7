// A net's side-channel listener: it accepts connections and admits one only
// once the initiator has proved the communicator's key over this side's
// fresh nonce (the handshake in wire.hpp). Until then a connection is
// pending: bounded per source address and in all by the policy of
// hcomm/plugin/pending.hpp, and dropped, with a warning naming where it came
// from and why, when its handshake fails or is overdue. Needs no RDMA device.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "side_channel.hpp"
#include "wire.hpp"

namespace hcomm::verbs {

class Acceptor {
 public:
  using Clock = std::chrono::steady_clock;
  // A whole handshake must end within this time of the connection's arrival.
  static constexpr std::chrono::seconds kHandshakeDeadline{10};

  // A side channel whose peer proved the key, with the hello it sent.
  struct Admitted {
    Channel channel;
    Hello hello;
  };
  struct Progress {
    std::vector<Admitted> admitted;
    std::vector<std::string> warnings;  // connections dropped, and why; for the log
  };

  // Listens on `ip` (network byte order; any free port) for the side
  // channels of rank `rank` of a communicator of `nranks` with key `key`.
  Acceptor(const Key& key, int rank, int nranks, uint32_t ip);

  uint16_t port() const { return port_; }
  // Whether handshakes are under way (poll has work at every call).
  bool busy() const { return !pending_.empty(); }
  // The listener and the pending connections, for wait.
  void watched_fds(std::vector<int>* fds) const;

  // Accepts what came and moves the handshakes on: the side channels
  // admitted and the connections dropped since the last call.
  Progress poll();

 private:
  struct Pending {
    Channel channel;
    uint32_t source;  // IPv4, network byte order
    std::string from;
    Clock::time_point deadline;
    Hello::Bytes request{};  // the hello as it came
    bool challenged = false;
    auth::Nonce nonce{};  // this side's, sent in the challenge
  };
  using PendingList = std::vector<Pending>;

  void accept_new(Progress* progress);
  // Moves one handshake on: true once admitted (into `admitted`); throws the
  // reason of a refusal.
  bool step(Pending& p, std::vector<Admitted>* admitted);
  void challenge(Pending& p);
  std::string refusal(const Hello& hello) const;
  // Closes a pending connection, saying why; the one after it.
  PendingList::iterator drop(PendingList::iterator victim, const std::string& why, Progress* progress);

  const Key key_;
  const int rank_;
  const int nranks_;
  uint16_t port_ = 0;  // set by listener_'s initialiser
  Fd listener_;
  PendingList pending_;  // in the order of arrival
};

}  // namespace hcomm::verbs
