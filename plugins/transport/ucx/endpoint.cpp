#include "endpoint.hpp"

#include <algorithm>

#include "net.hpp"

namespace hcomm::ucx {

using plugin::format;

// A peer process of this host is also watched through its pidfd. With
// HCOMM_UCX_HOST_PEER_FAILURE=0 UCX's own peer-failure mode is left off for
// it, because with it UCX 1.13 gives up cross-memory attach and moves large
// messages through shared-memory fragments, about ten times slower
// (benchmarks/ucx.md); but UCX then takes a copy that fails because the peer
// died as fatal and aborts. By default every peer gets UCX's peer-failure
// mode and its error handler.
Endpoint::Endpoint(Net& net, int peer_rank, const PeerAddress& peer) : net_(net), peer_rank_(peer_rank) {
  if (net.local().same_process_space(peer)) process_ = std::make_unique<PeerProcess>(peer.pid);
  const bool watched = !net.config().host_peer_failure && process_ && process_->fd() >= 0;
  ucp_ep_params_t params{
      .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE,
      .address = reinterpret_cast<const ucp_address_t*>(peer.worker.data()),
      .err_mode = watched ? UCP_ERR_HANDLING_MODE_NONE : UCP_ERR_HANDLING_MODE_PEER,
  };
  if (!watched) {
    params.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLER;
    params.err_handler = {.cb = &Net::on_ucx_error, .arg = &net};
  }
  if (ucs_status_t status = ucp_ep_create(net.worker(), &params, &ep_); status != UCS_OK)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE,
                       "ucx: connect: no UCX endpoint to rank %d: %s (do both ranks have a UCX "
                       "transport in common? see HCOMM_UCX_TLS)",
                       peer_rank, ucs_status_string(status));
  net.adopt_ep(ep_, this);
  // A wireup lane answers flush with "no resource" until it is connected, so
  // this flush completes only when every lane to the peer is set up.
  ucp_request_param_t flush{.op_attr_mask = 0};
  ucs_status_ptr_t flushed = ucp_ep_flush_nbx(ep_, &flush);
  if (UCS_PTR_IS_ERR(flushed)) {
    release_ep(true);
    HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE, "ucx: connect: setting up the connection to rank %d failed: %s", peer_rank,
                       ucs_status_string(UCS_PTR_STATUS(flushed)));
  }
  wireup_ = flushed;
}

Endpoint::~Endpoint() {
  for (Request* request : pending_) request->endpoint = nullptr;
  if (wireup_) ucp_request_free(wireup_);  // UCX releases it when the closed endpoint ends it
}

bool Endpoint::ready() {
  check_usable("ep_ready");
  if (!wireup_) return true;
  ucs_status_t status = ucp_request_check_status(wireup_);
  if (status == UCS_INPROGRESS) return false;
  ucp_request_free(wireup_);
  wireup_ = nullptr;
  if (status != UCS_OK) {
    fail(format("ucx: the connection to rank %d could not be set up: %s", peer_rank_, ucs_status_string(status)));
    throw plugin::Error(HCOMM_ERR_REMOTE, error_);
  }
  return true;
}

void Endpoint::check_usable(const char* call) const {
  switch (state_) {
    case State::kReady:
      return;
    case State::kPeerClosed:
    case State::kFailed:
      throw plugin::Error(HCOMM_ERR_REMOTE, error_);
    case State::kClosed:
      HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "ucx: %s: the endpoint to rank %d is closed", call, peer_rank_);
  }
}

Request* Endpoint::isend(const void* buf, size_t len, uint64_t tag) {
  check_usable("isend");
  ucp_request_param_t params{.op_attr_mask = 0};
  ucs_status_ptr_t sent = ucp_tag_send_nbx(ep_, buf, len, net_.codec().data(net_.rank(), tag), &params);
  if (UCS_PTR_IS_ERR(sent))
    HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE, "ucx: a send of %zu bytes to rank %d failed: %s", len, peer_rank_,
                       ucs_status_string(UCS_PTR_STATUS(sent)));
  return net_.requests().add(Request{.kind = Request::Kind::kSend,
                                     .peer = peer_rank_,
                                     .len = len,
                                     .tag = tag,
                                     .ucx = sent,
                                     .endpoint = sent ? this : nullptr});
}

Request* Endpoint::irecv(void* buf, size_t len, uint64_t tag) {
  uint64_t ucx_tag = net_.codec().data(peer_rank_, tag);
  if (state_ == State::kPeerClosed) {
    // Only what the peer sent before its goodbye can still match.
    ucp_tag_recv_info_t info{};
    if (!ucp_tag_probe_nb(net_.worker(), ucx_tag, TagCodec::kFullMask, 0, &info))
      HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE, "%s; nothing it sent with tag 0x%llx is left to receive", error_.c_str(),
                         static_cast<unsigned long long>(tag));
  } else {
    check_usable("irecv");
  }
  Request* request = net_.requests().add(
      Request{.kind = Request::Kind::kRecv, .peer = peer_rank_, .len = len, .tag = tag, .endpoint = this});
  // UCX 1.13 reports a length of 0 for a receive that completes at once
  // (a message that was waiting), through either recv_info or the request:
  // NO_IMM_CMPL makes it complete through the request with the length.
  ucp_request_param_t params{.op_attr_mask = UCP_OP_ATTR_FLAG_NO_IMM_CMPL};
  ucs_status_ptr_t posted = ucp_tag_recv_nbx(net_.worker(), buf, len, ucx_tag, TagCodec::kFullMask, &params);
  if (UCS_PTR_IS_ERR(posted)) {
    request->fail(UCS_PTR_STATUS(posted));  // reported by test
    posted = nullptr;
  }
  request->ucx = posted;
  if (!posted) untrack(request);
  return request;
}

void Endpoint::peer_closed() { peer_gone(format("ucx: rank %d closed its endpoint", peer_rank_)); }

void Endpoint::process_died() { lost(format("ucx: rank %d died (its process has exited)", peer_rank_)); }

// A peer that finished its part and left before its goodbye arrived fails
// nothing here: with no request of this rank still waiting on it (requests
// UCX finished count as done, collected or not), it is gone as after a
// goodbye (what it sent stays receivable, later requests fail). With
// requests waiting, they fail and progress reports the loss.
void Endpoint::lost(const std::string& text) {
  if (std::none_of(pending_.begin(), pending_.end(), [](const Request* r) { return r->unfinished(); }))
    peer_gone(text);
  else
    fail(text);
}

void Endpoint::peer_gone(std::string text) {
  if (state_ != State::kReady) return;
  state_ = State::kPeerClosed;
  error_ = std::move(text);
  // Receives still posted were not matched by anything the peer sent before
  // it left, and sends it will not receive: both fail.
  fail_pending(HCOMM_ERR_REMOTE, error_, true);
  release_ep(true);
  net_.log(HCOMM_LOG_DEBUG, error_);
}

void Endpoint::ucx_failed(ucs_status_t status) {
  // Not ready: the peer's goodbye came first, and the ucp endpoint is closed already.
  if (state_ == State::kReady)
    lost(format("ucx: connection to rank %d lost: %s", peer_rank_, ucs_status_string(status)));
}

void Endpoint::fail(const std::string& text) {
  state_ = State::kFailed;
  error_ = text;
  fail_pending(HCOMM_ERR_REMOTE, text, true);
  release_ep(true);
  net_.report_lost(text);
}

void Endpoint::close() {
  if (state_ == State::kClosed) return;
  bool orderly = state_ == State::kReady;
  fail_pending(HCOMM_ERR_INVALID_ARGUMENT,
               format("ucx: the endpoint to rank %d was closed with this request pending", peer_rank_), !orderly);
  state_ = State::kClosed;
  if (orderly) net_.say_goodbye(ep_);
  release_ep(!orderly);
}

void Endpoint::fail_pending(hcomm_result_t code, const std::string& text, bool sends) {
  std::unordered_set<Request*> pending;
  pending.swap(pending_);
  for (Request* request : pending) {
    // Finished by UCX, not yet collected: its outcome stands.
    if ((request->kind == Request::Kind::kSend && !sends) || !request->unfinished()) {
      pending_.insert(request);
      continue;
    }
    request->fail(code, text);
    request->endpoint = nullptr;
    if (request->kind == Request::Kind::kRecv) ucp_request_cancel(net_.worker(), request->ucx);
  }
}

void Endpoint::release_ep(bool force) {
  if (!ep_) return;
  net_.close_ep(ep_, force);
  ep_ = nullptr;
}

}  // namespace hcomm::ucx
