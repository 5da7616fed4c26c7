#include "endpoint.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <vector>

#include "net.hpp"

namespace hcomm::ofi {

std::string Request::describe(int peer) const {
  return plugin::format("%s of %zu bytes %s rank %d (tag 0x%llx)", send ? "send" : "receive", len,
                        send ? "to" : "from", peer, static_cast<unsigned long long>(tag));
}

Endpoint::Endpoint(Net& net, int rank, fi_addr_t addr, pid_t pid, bool watch, std::string leftover)
    : net_(net), rank_(rank), addr_(addr), pid_(pid), leftover_(std::move(leftover)) {
  if (watch && pid > 0) process_ = std::make_unique<PeerProcess>(pid);
}

void Endpoint::check_usable(bool send) const {
  switch (state_) {
    case State::kOpen:
      return;
    case State::kPeerClosed:
      // Receives may still match what arrived before the bye.
      if (!send) return;
      HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE, "ofi: rank %d closed its endpoint; nothing more can be sent to it", rank_);
    case State::kFailed:
      throw plugin::Error(failure_code_, failure_);
    case State::kClosed:
      HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "ofi: the endpoint to rank %d was closed (ep_close)", rank_);
  }
}

void Endpoint::fail_request(Request& r, hcomm_result_t code, const std::string& text) {
  pending_.erase(&r);
  net_.fail(r, code, text);
}

void Endpoint::fail(hcomm_result_t code, const std::string& text) {
  if (state_ == State::kFailed || state_ == State::kClosed) return;
  state_ = State::kFailed;
  failure_code_ = code;
  failure_ = text;
  std::vector<Request*> waiting(pending_.begin(), pending_.end());
  for (Request* r : waiting) fail_request(*r, code, text + ": " + r->describe(rank_));
  remove_leftover_if_dead();
}

void Endpoint::remove_leftover_if_dead() {
  if (process_ && !leftover_.empty() && !process_->alive()) ::shm_unlink(leftover_.c_str());
}

void Endpoint::peer_closed() {
  if (state_ != State::kOpen) return;
  state_ = State::kPeerClosed;
  peer_closed_at_ = Clock::now();
}

void Endpoint::close() {
  std::vector<Request*> waiting(pending_.begin(), pending_.end());
  for (Request* r : waiting)
    fail_request(*r, HCOMM_ERR_INVALID_ARGUMENT,
                 plugin::format("ofi: %s: the endpoint was closed first", r->describe(rank_).c_str()));
  state_ = State::kClosed;
}

void Endpoint::check(Clock::time_point now, Clock::duration grace) {
  // Only what waits on the peer needs its death noticed: a poll per peer is not free on large jobs.
  if ((state_ != State::kOpen && state_ != State::kPeerClosed) || pending_.empty()) return;
  if (process_ && !process_->alive()) {
    // What it sent before it died may wait in the provider's queue still: take it first.
    net_.read_completions();
    if (pending_.empty()) return;
    fail(HCOMM_ERR_REMOTE, plugin::format("ofi: rank %d (pid %d on this host) died", rank_, static_cast<int>(pid_)));
    return;
  }
  if (state_ != State::kPeerClosed) return;
  std::vector<Request*> unanswered;
  for (Request* r : pending_)
    if (now - std::max(r->posted_at, peer_closed_at_) > grace) unanswered.push_back(r);
  for (Request* r : unanswered)
    fail_request(*r, HCOMM_ERR_REMOTE,
                 plugin::format("ofi: rank %d closed its endpoint and sent nothing for this %s", rank_,
                                r->describe(rank_).c_str()));
}

}  // namespace hcomm::ofi
