#include "core/topology/topology.hpp"

#include <algorithm>

#include "core/common/error.hpp"

namespace hcomm::topology {

namespace {

constexpr const char* kClassNames[] = {"self", "numa", "host", "net"};

}  // namespace

const char* link_class_name(LinkClass c) { return kClassNames[static_cast<int>(c)]; }

std::optional<LinkClass> link_class_from_name(const std::string& name) {
  for (int c = 0; c < 4; ++c)
    if (name == kClassNames[c]) return static_cast<LinkClass>(c);
  return std::nullopt;
}

Topology::Topology(std::vector<Description> ranks) : ranks_(std::move(ranks)), host_of_(ranks_.size()) {
  for (int r = 0; r < size(); ++r) {
    int h = 0;
    while (h < nhosts() && !(ranks_[hosts_[h].front()].host == ranks_[r].host)) ++h;
    if (h == nhosts()) hosts_.emplace_back();
    hosts_[h].push_back(r);
    host_of_[r] = h;
  }
}

LinkClass Topology::link_class(int a, int b) const {
  if (a == b) return LinkClass::kSelf;
  if (!same_host(a, b)) return LinkClass::kNetwork;
  const int na = ranks_.at(a).numa;
  return na >= 0 && na == ranks_.at(b).numa ? LinkClass::kNuma : LinkClass::kHost;
}

bool Topology::caches_apart(int a, int b) const {
  const int la = ranks_.at(a).llc, lb = ranks_.at(b).llc;
  return a != b && same_host(a, b) && la >= 0 && lb >= 0 && la != lb;
}

std::vector<int> Topology::leaders() const {
  std::vector<int> out;
  for (const auto& ranks : hosts_) out.push_back(ranks.front());
  return out;
}

int Topology::rail_of(int r) const {
  const Description& d = ranks_.at(r);
  if (d.nnics == 0) return -1;
  for (uint32_t i = 0; i < d.nnics; ++i)
    if (d.numa >= 0 && d.nics[i].numa == d.numa) return static_cast<int>(i);
  return 0;
}

std::vector<std::vector<int>> Topology::rails() const {
  const bool several = std::any_of(ranks_.begin(), ranks_.end(), [](const Description& d) { return d.nnics > 1; });
  std::vector<std::vector<int>> out;
  if (!several) return out;
  for (int r = 0; r < size(); ++r) {
    const int rail = rail_of(r);
    if (rail < 0) continue;
    if (static_cast<int>(out.size()) <= rail) out.resize(rail + 1);
    out[rail].push_back(r);
  }
  std::erase_if(out, [](const std::vector<int>& ranks) { return ranks.empty(); });
  return out;
}

void Topology::describe_link(int a, int b, const hcomm_link_score_t& score) {
  HCOMM_ENFORCE(a >= 0 && b >= 0 && a < size() && b < size() && a != b, "no link between ranks %d and %d of %d", a, b,
                size());
  described_[std::minmax(a, b)] = score;
}

std::optional<hcomm_link_score_t> Topology::described_link(int a, int b) const {
  auto it = described_.find(std::minmax(a, b));
  if (it == described_.end()) return std::nullopt;
  return it->second;
}

int best_offer(std::span<const Offer> offers, bool ordered, bool same_host) {
  int best = -1;
  for (size_t i = 0; i < offers.size(); ++i) {
    const Offer& o = offers[i];
    if (!o.score.reachable || (o.host_local && !same_host)) continue;
    if (best < 0) {
      best = static_cast<int>(i);
      if (ordered) break;
      continue;
    }
    const Offer& b = offers[best];
    const bool better = o.score.bandwidth_gbps != b.score.bandwidth_gbps
                            ? o.score.bandwidth_gbps > b.score.bandwidth_gbps
                        : o.score.latency_us != b.score.latency_us ? o.score.latency_us < b.score.latency_us
                                                                   : o.priority > b.priority;
    if (better) best = static_cast<int>(i);
  }
  return best;
}

}  // namespace hcomm::topology
