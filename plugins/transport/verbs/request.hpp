// Requests: one per isend or irecv, owned by the net from posting until test
// reports them finished (or the net closes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "hcomm/types.h"
#include "reg_cache.hpp"

namespace hcomm::verbs {

class RequestSet;

class Request {
 public:
  enum class Kind : uint8_t { kSend, kRecv };

  Request(RequestSet& owner, Kind kind, std::byte* buf, size_t len, uint64_t tag)
      : owner_(owner), kind_(kind), buf_(buf), len_(len), tag_(tag) {}

  RequestSet& owner() const { return owner_; }
  Kind kind() const { return kind_; }
  std::byte* buf() const { return buf_; }
  size_t len() const { return len_; }
  uint64_t tag() const { return tag_; }

  bool pending() const { return state_ == State::kPending; }
  void complete(size_t bytes);
  // Only the first outcome counts: a finished request stays finished.
  void fail(hcomm_result_t code, const std::string& text);
  // True when finished, with *bytes the length moved; a failure throws.
  bool finished(size_t* bytes) const;

  uint64_t seq = 0;                               // message number on its endpoint (rendezvous)
  uint64_t incoming = 0;                          // rendezvous receive: the length being written
  const RegCache::Entry* registration = nullptr;  // rendezvous: the buffer's registration

 private:
  enum class State : uint8_t { kPending, kDone, kFailed };

  RequestSet& owner_;
  Kind kind_;
  std::byte* buf_;
  size_t len_;
  uint64_t tag_;
  State state_ = State::kPending;
  size_t bytes_ = 0;
  hcomm_result_t code_ = HCOMM_SUCCESS;
  std::string error_;
};

class RequestSet {
 public:
  Request* create(Request::Kind kind, std::byte* buf, size_t len, uint64_t tag);
  // Request::finished, then frees a finished request.
  bool test(Request* request, size_t* bytes);
  bool owns(const Request* request) const { return live_.count(request) != 0; }

 private:
  std::unordered_map<const Request*, std::unique_ptr<Request>> live_;
};

}  // namespace hcomm::verbs
