#include "request.hpp"

#include "hcomm/plugin/util.hpp"

namespace hcomm::verbs {

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

bool Request::finished(size_t* bytes) const {
  if (state_ == State::kFailed) throw plugin::Error(code_, error_);
  if (state_ == State::kPending) return false;
  *bytes = bytes_;
  return true;
}

Request* RequestSet::create(Request::Kind kind, std::byte* buf, size_t len, uint64_t tag) {
  auto r = std::make_unique<Request>(*this, kind, buf, len, tag);
  Request* raw = r.get();
  live_.emplace(raw, std::move(r));
  return raw;
}

bool RequestSet::test(Request* request, size_t* bytes) {
  auto it = live_.find(request);
  if (it == live_.end())
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                       "verbs: test: request %p is not pending on this net (finished already, or never posted)",
                       static_cast<void*>(request));
  try {
    if (!request->finished(bytes)) return false;
  } catch (...) {
    live_.erase(it);
    throw;
  }
  live_.erase(it);
  return true;
}

}  // namespace hcomm::verbs
