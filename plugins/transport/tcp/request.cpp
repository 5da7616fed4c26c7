#include "request.hpp"

#include "hcomm/plugin/util.hpp"

namespace hcomm::tcp {

void Request::complete(size_t bytes) {
  if (state_ != State::kPending) return;
  state_ = State::kDone;
  bytes_ = bytes;
}

void Request::fail(hcomm_result_t code, const std::string& text) {
  if (state_ != State::kPending) return;
  state_ = State::kFailed;
  code_ = code;
  error_ = text;
}

Request* RequestSet::create(Request::Kind kind, std::byte* buf, size_t len, uint64_t tag) {
  auto request = std::make_unique<Request>(*this, kind, buf, len, tag);
  Request* raw = request.get();
  live_.emplace(raw, std::move(request));
  return raw;
}

bool RequestSet::test(Request* request, size_t* bytes) {
  auto it = live_.find(request);
  if (it == live_.end())
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "tcp: test: unknown request %p (already finished?)",
                       static_cast<void*>(request));
  switch (request->state_) {
    case Request::State::kPending:
      return false;
    case Request::State::kDone:
      *bytes = request->bytes_;
      live_.erase(it);
      return true;
    case Request::State::kFailed:
      break;
  }
  plugin::Error error(request->code_, request->error_);
  live_.erase(it);
  throw error;
}

}  // namespace hcomm::tcp
