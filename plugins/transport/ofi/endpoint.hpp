// One peer of a net: its address-vector entry, the requests waiting on it,
// and its fate (closed by us, closed by the peer, failed).
#pragma once

#include <rdma/fabric.h>

#include <memory>
#include <string>
#include <unordered_set>

#include "address.hpp"
#include "peer_process.hpp"
#include "request.hpp"

namespace hcomm::ofi {

class Net;

class Endpoint {
 public:
  enum class State {
    kOpen,
    kPeerClosed,  // the peer said bye: what it sent before still arrives
    kFailed,      // the peer died or the provider reported a broken link
    kClosed       // ep_close: no more requests
  };

  // `watch` when the peer's process is on this host, so its death shows as
  // soon as it happens; `leftover` names the shared memory the provider keeps
  // for it there, which nobody else removes once it died.
  Endpoint(Net& net, int rank, fi_addr_t addr, pid_t pid, bool watch, std::string leftover);

  Net& net() const { return net_; }
  int rank() const { return rank_; }
  fi_addr_t addr() const { return addr_; }
  State state() const { return state_; }
  bool greeted() const { return greeted_; }
  void set_greeted() { greeted_ = true; }

  // Throws the reason a new send or receive cannot be posted, if there is one.
  void check_usable(bool send) const;

  void add(Request& r) { pending_.insert(&r); }
  void remove(Request& r) { pending_.erase(&r); }

  // Fails every pending request (and later posts) with `code` and `text`.
  void fail(hcomm_result_t code, const std::string& text);
  void peer_closed();
  // The provider unlinks its region at close, which a killed process never
  // reaches: once this peer is seen dead, however its death showed (its
  // requests failing, or the watch), its region goes.
  void remove_leftover_if_dead();
  // ep_close: pending requests fail; nothing more may be posted.
  void close();
  // The periodic check: the peer's process is alive; receives that nothing
  // answered within `grace` of the peer's bye (or of their posting) fail.
  void check(Clock::time_point now, Clock::duration grace);

 private:
  void fail_request(Request& r, hcomm_result_t code, const std::string& text);

  Net& net_;
  int rank_;
  fi_addr_t addr_;
  pid_t pid_;
  std::unique_ptr<PeerProcess> process_;
  std::string leftover_;
  State state_ = State::kOpen;
  bool greeted_ = false;
  hcomm_result_t failure_code_ = HCOMM_SUCCESS;
  std::string failure_;
  Clock::time_point peer_closed_at_;
  std::unordered_set<Request*> pending_;
};

}  // namespace hcomm::ofi
