// A peer: its ucp endpoint (created from the peer's worker address, with
// UCX's peer-failure handling), the requests posted on it, and the one
// failure that all of them report.
#pragma once

#include <ucp/api/ucp.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>

#include "address.hpp"
#include "peer_process.hpp"
#include "request.hpp"

namespace hcomm::ucx {

class Net;

class Endpoint {
 public:
  Endpoint(Net& net, int peer_rank, const PeerAddress& peer);
  ~Endpoint();
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  Net& net() const { return net_; }
  int peer_rank() const { return peer_rank_; }
  // The pidfd of a peer on this host, else -1.
  int process_fd() const { return process_ ? process_->fd() : -1; }

  // UCX connects in the background; ready once its wireup is complete
  // (a flush posted at creation finished), so that a peer dying later never
  // finds the endpoint half set up (UCX 1.13 aborts the survivor then).
  bool ready();
  Request* isend(const void* buf, size_t len, uint64_t tag);
  Request* irecv(void* buf, size_t len, uint64_t tag);

  // The peer's goodbye arrived: what it sent stays receivable, nothing more comes.
  void peer_closed();
  // UCX's error handler fired for the ucp endpoint.
  void ucx_failed(ucs_status_t status);
  // The peer process of this host has exited (see lost).
  bool process_alive() const { return !process_ || process_->alive(); }
  void process_died();
  // Orderly close: pending receives fail, sends still go, the peer is told.
  void close();

  void track(Request* request) { pending_.insert(request); }
  void untrack(Request* request) {
    pending_.erase(request);
    request->endpoint = nullptr;
  }

 private:
  enum class State { kReady, kPeerClosed, kFailed, kClosed };

  void check_usable(const char* call) const;
  // The peer left (goodbye or exit), said by `text`.
  void peer_gone(std::string text);
  // The peer was lost (died, connection broken): peer_gone or fail.
  void lost(const std::string& text);
  // Marks the pending requests (the sends too when `sends`) with the
  // outcome, cancels the receives, and detaches them all.
  void fail_pending(hcomm_result_t code, const std::string& text, bool sends);
  // Hands the ucp endpoint to the net to close (force: without flushing).
  void release_ep(bool force);
  void fail(const std::string& text);

  Net& net_;
  const int peer_rank_;
  ucp_ep_h ep_ = nullptr;
  void* wireup_ = nullptr;  // the flush that completes with UCX's wireup, until ready sees it
  std::unique_ptr<PeerProcess> process_;
  State state_ = State::kReady;
  std::string error_;  // HCOMM_ERR_REMOTE's text once the peer closed or failed
  std::unordered_set<Request*> pending_;
};

}  // namespace hcomm::ucx
