#include "score.hpp"

#include <algorithm>

namespace hcomm::verbs {

double link_bandwidth_gbps(uint32_t rate_mbps) {
  constexpr uint32_t kNominalMbps = 100000;
  return (rate_mbps ? rate_mbps : kNominalMbps) / 8000.0;
}

hcomm_link_score_t score_link(const Address& a, const Address& b) {
  hcomm_link_score_t none{.reachable = 0, .bandwidth_gbps = 0.0, .latency_us = 0.0};
  if (!a.has_device || !b.has_device || a.link_layer != b.link_layer) return none;
  if (a.link_layer == LinkLayer::kInfiniBand && !std::equal(a.gid.begin(), a.gid.begin() + 8, b.gid.begin()))
    return none;
  return hcomm_link_score_t{.reachable = 1,
                            .bandwidth_gbps = link_bandwidth_gbps(std::min(a.rate_mbps, b.rate_mbps)),
                            .latency_us = kLatencyUs};
}

}  // namespace hcomm::verbs
