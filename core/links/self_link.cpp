#include "core/links/self_link.hpp"

#include <algorithm>
#include <cstring>

#include "core/common/error.hpp"

namespace hcomm::links {

void* SelfLink::isend(const void* buf, size_t len, uint64_t tag) {
  if (auto posted = first(posted_, tag); posted != posted_.end()) {
    deliver(*posted->second, buf, len);
    posted_.erase(posted);
  } else {
    const auto* bytes = static_cast<const uint8_t*>(buf);
    held_.emplace(tag, std::vector<uint8_t>(bytes, bytes + len));
  }
  return &sent_;
}

void* SelfLink::irecv(void* buf, size_t len, uint64_t tag) {
  Receive& r = receives_.emplace_back(Receive{.buf = buf, .len = len});
  if (auto held = first(held_, tag); held != held_.end()) {
    deliver(r, held->second.data(), held->second.size());
    held_.erase(held);
  } else {
    posted_.emplace(tag, &r);
  }
  return &r;
}

bool SelfLink::test(void* request, size_t* bytes) {
  if (request == &sent_) return true;
  auto it = std::find_if(receives_.begin(), receives_.end(), [&](const Receive& r) { return &r == request; });
  if (!it->done) return false;
  std::string error = std::move(it->error);
  *bytes = it->len;
  receives_.erase(it);
  if (!error.empty()) throw Error(HCOMM_ERR_INVALID_ARGUMENT, error);
  return true;
}

void SelfLink::deliver(Receive& r, const void* data, size_t len) {
  r.done = true;
  if (len != r.len)
    r.error = format("rank %d sent itself a message of %zu bytes that met a receive of %zu bytes", rank_, len, r.len);
  else if (len)
    std::memcpy(r.buf, data, len);
}

}  // namespace hcomm::links
