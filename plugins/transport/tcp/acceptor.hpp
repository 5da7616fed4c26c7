// The accepting side of a net: the listening socket, and accepted sockets
// until their handshake (wire.hpp) says who they are. A socket that does not
// prove the communicator's key, or not within a deadline, is dropped with a
// warning naming the remote address (rate-limited: a flood of them writes a
// few lines); a good one goes to the endpoint of its rank, or waits for that
// endpoint to be created. Pending sockets are bounded per source address and
// in all (hcomm/plugin/pending.hpp): a newcomer beyond a bound takes the place
// of the oldest, a silent one first.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "poller.hpp"
#include "socket.hpp"
#include "wire.hpp"

namespace hcomm::tcp {

class Net;

class Acceptor final : public EventHandler {
 public:
  Acceptor(Net& net, const InetAddress& where);
  ~Acceptor() override;

  const InetAddress& address() const { return address_; }

  // A socket that said hello before its endpoint existed.
  struct Arrival {
    int index;
    Socket socket;
    InetAddress from;
  };
  std::vector<Arrival> take_early(int rank);

  void on_events(uint32_t events) override;
  // Drops sockets whose hello is overdue, and forgets finished ones.
  void expire(Clock::time_point now);
  std::optional<Clock::time_point> next_deadline() const;

 private:
  class PendingHello;
  using Pending = std::vector<std::unique_ptr<PendingHello>>;  // in the order of arrival

  // After the hello: the challenge, or a refusal.
  void challenge(PendingHello& pending);
  // After the proof: the socket goes to its endpoint, or is dropped.
  void admit(PendingHello& pending);
  std::optional<std::string> refusal(const wire::Hello& hello) const;
  void drop(PendingHello& pending, const std::string& why);
  // Drops *victim to make room for a newer socket; false when victim is end().
  bool evict(Pending::iterator victim);

  Net& net_;
  Socket listener_;
  InetAddress address_;
  Pending pending_;
  std::unordered_map<int, std::vector<Arrival>> early_;  // by rank
};

}  // namespace hcomm::tcp
