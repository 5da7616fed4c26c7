// Requests: one per isend or irecv, owned by the net from posting until test
// reports them finished (or the net closes). A request wraps the UCX request
// (polled with ucp_request_check_status, no callbacks) and remembers what to
// report when UCX fails it.
#pragma once

#include <ucp/api/ucp.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "hcomm/types.h"

namespace hcomm::ucx {

class Endpoint;
class RequestSet;

struct Request {
  enum class Kind : uint8_t { kSend, kRecv };

  Kind kind;
  int peer;
  size_t len;
  uint64_t tag;
  void* ucx = nullptr;           // the UCX request; null when the call completed at once
  Endpoint* endpoint = nullptr;  // while the endpoint is open
  RequestSet* owner = nullptr;   // set by RequestSet::add
  // Set when the endpoint failed or closed under the request: the outcome
  // to report for a UCX error or cancellation.
  hcomm_result_t code = HCOMM_SUCCESS;
  std::string error;

  // UCX still works on it (a call that completed at once never did).
  bool unfinished() const { return ucx && ucp_request_check_status(ucx) == UCS_INPROGRESS; }

  void fail(hcomm_result_t failure, const std::string& text) {
    if (code != HCOMM_SUCCESS) return;
    code = failure;
    error = text;
  }
  // The outcome of a UCX failure (truncation, or a peer lost).
  void fail(ucs_status_t status);
};

class RequestSet {
 public:
  RequestSet() = default;
  ~RequestSet();
  RequestSet(const RequestSet&) = delete;
  RequestSet& operator=(const RequestSet&) = delete;

  // Takes the request over; it is tracked by its endpoint while pending.
  Request* add(Request request);
  // True when finished, with *bytes the length moved; a failure throws its
  // error. Either way a finished request is freed.
  bool test(Request* request, size_t* bytes);
  // Cancels every receive still posted (close of the net).
  void cancel_receives(ucp_worker_h worker);
  bool any_pending() const;
  // Frees every request (UCX frees its own ones once they complete).
  void clear();

 private:
  void release(Request* request);

  std::unordered_map<const Request*, std::unique_ptr<Request>> live_;
};

}  // namespace hcomm::ucx
