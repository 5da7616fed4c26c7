#include "protocol.hpp"

namespace hcomm::verbs {

Request* Matcher::match_arrival(uint64_t tag) {
  auto it = posted_.find(tag);
  if (it == posted_.end()) return nullptr;
  Request* r = it->second.front();
  it->second.pop_front();
  if (it->second.empty()) posted_.erase(it);
  return r;
}

void Matcher::keep_arrival(uint64_t tag, Arrival arrival) {
  arrived_[tag].push_back(std::move(arrival));
  ++arrival_count_;
}

std::optional<Arrival> Matcher::match_receive(uint64_t tag) {
  auto it = arrived_.find(tag);
  if (it == arrived_.end()) return std::nullopt;
  Arrival a = std::move(it->second.front());
  it->second.pop_front();
  if (it->second.empty()) arrived_.erase(it);
  --arrival_count_;
  return a;
}

void Matcher::post_receive(Request* recv) { posted_[recv->tag()].push_back(recv); }

std::vector<Request*> Matcher::take_posted() {
  std::vector<Request*> out;
  for (auto& [tag, queue] : posted_) out.insert(out.end(), queue.begin(), queue.end());
  posted_.clear();
  return out;
}

}  // namespace hcomm::verbs
