#include "request.hpp"

#include "endpoint.hpp"
#include "hcomm/plugin/util.hpp"

namespace hcomm::ucx {

using plugin::format;

void Request::fail(ucs_status_t status) {
  if (status == UCS_ERR_MESSAGE_TRUNCATED)
    fail(HCOMM_ERR_INVALID_ARGUMENT,
         format("ucx: a receive of %zu bytes from rank %d with tag 0x%llx is shorter than its message", len, peer,
                static_cast<unsigned long long>(tag)));
  else
    fail(HCOMM_ERR_REMOTE,
         format("ucx: %s rank %d (tag 0x%llx) failed: %s", kind == Kind::kSend ? "a send to" : "a receive from", peer,
                static_cast<unsigned long long>(tag), ucs_status_string(status)));
}

RequestSet::~RequestSet() { clear(); }

Request* RequestSet::add(Request request) {
  auto owned = std::make_unique<Request>(std::move(request));
  Request* raw = owned.get();
  raw->owner = this;
  live_.emplace(raw, std::move(owned));
  if (raw->endpoint) raw->endpoint->track(raw);
  return raw;
}

bool RequestSet::test(Request* request, size_t* bytes) {
  auto it = live_.find(request);
  if (it == live_.end())
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "ucx: test: unknown request %p (already finished?)",
                       static_cast<void*>(request));
  Request& r = *request;
  ucs_status_t status = r.code == HCOMM_SUCCESS ? UCS_OK : UCS_ERR_CANCELED;
  size_t moved = r.kind == Request::Kind::kSend ? r.len : 0;
  if (r.ucx) {
    ucp_tag_recv_info_t info{};
    status = r.kind == Request::Kind::kRecv ? ucp_tag_recv_request_test(r.ucx, &info) : ucp_request_check_status(r.ucx);
    // A request whose endpoint failed under it ends now: UCX may never
    // finish it (a rendezvous send to a dead peer whose endpoint has no
    // peer-failure mode) and frees it whenever it does.
    if (status == UCS_INPROGRESS && r.code == HCOMM_SUCCESS) return false;
    if (r.kind == Request::Kind::kRecv) moved = info.length;
  }
  if (status == UCS_OK) {
    release(request);
    *bytes = moved;
    return true;
  }
  if (r.code == HCOMM_SUCCESS) r.fail(status);
  hcomm_result_t code = r.code;
  std::string text = r.error;
  release(request);
  throw plugin::Error(code, text);
}

void RequestSet::cancel_receives(ucp_worker_h worker) {
  for (auto& [raw, request] : live_)
    if (request->kind == Request::Kind::kRecv && request->ucx) ucp_request_cancel(worker, request->ucx);
}

bool RequestSet::any_pending() const {
  for (const auto& [raw, request] : live_)
    if (request->ucx && ucp_request_check_status(request->ucx) == UCS_INPROGRESS) return true;
  return false;
}

void RequestSet::clear() {
  for (auto& [raw, request] : live_) {
    if (request->endpoint) request->endpoint->untrack(request.get());
    if (request->ucx) ucp_request_free(request->ucx);
  }
  live_.clear();
}

void RequestSet::release(Request* request) {
  if (request->endpoint) request->endpoint->untrack(request);
  if (request->ucx) ucp_request_free(request->ucx);
  live_.erase(request);
}

}  // namespace hcomm::ucx
