// The ranks of a communicator as the topology sees them: hosts numbered in
// order of their lowest rank, the class of every pair's link, and the levels
// hierarchical algorithms work on (the ranks of each host, the hosts'
// leaders, the rails). Every rank builds it from the same descriptions, so
// every rank sees the same topology.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/topology/description.hpp"
#include "hcomm/plugin/transport.h"

namespace hcomm::topology {

// From the closest to the farthest.
enum class LinkClass { kSelf = 0, kNuma = 1, kHost = 2, kNetwork = 3 };
// "self", "numa" (one host, one NUMA node), "host" (one host, across NUMA
// nodes or unbound), "net" (between hosts).
const char* link_class_name(LinkClass c);
std::optional<LinkClass> link_class_from_name(const std::string& name);

class Topology {
 public:
  explicit Topology(std::vector<Description> ranks);

  int size() const { return static_cast<int>(ranks_.size()); }
  const Description& rank(int r) const { return ranks_.at(r); }
  int nhosts() const { return static_cast<int>(hosts_.size()); }
  // Each rank's host, numbered 0.. in order of each host's lowest rank.
  const std::vector<int>& host_of() const { return host_of_; }
  LinkClass link_class(int a, int b) const;
  bool same_host(int a, int b) const { return host_of_.at(a) == host_of_.at(b); }
  // Ranks of one host bound to CPUs under different last-level caches: a
  // cache line one reads moves between the caches when the other writes it.
  bool caches_apart(int a, int b) const;

  // Levels. The ranks of host h in rank order (node-local ranks).
  const std::vector<int>& host_ranks(int h) const { return hosts_.at(h); }
  // Each host's lowest rank, in host order.
  std::vector<int> leaders() const;
  // The index of the NIC closest to rank r among its host's NICs (one on its
  // NUMA node, else the first), or -1 without NICs.
  int rail_of(int r) const;
  // The ranks of each rail (rail_of equal) in rank order; none unless some
  // host has several NICs, since one NIC per host makes one rail of everyone.
  std::vector<std::vector<int>> rails() const;

  // Link bandwidth and latency that a topology file gave for a pair, used
  // instead of the transports' scores in the algorithms' link models.
  void describe_link(int a, int b, const hcomm_link_score_t& score);
  std::optional<hcomm_link_score_t> described_link(int a, int b) const;

 private:
  std::vector<Description> ranks_;
  std::vector<int> host_of_;
  std::vector<std::vector<int>> hosts_;
  std::map<std::pair<int, int>, hcomm_link_score_t> described_;  // keyed (lower rank, higher rank)
};

// One transport's offer for a pair of ranks.
struct Offer {
  hcomm_link_score_t score;
  int priority;     // the plugin's tie-breaker, higher wins
  bool host_local;  // it reaches ranks of its own host only
};

// The offer that serves a pair, or -1 when none reaches: among the reachable
// offers (host-local ones only when `same_host`), the first when `ordered`
// (the user's order), else the highest bandwidth, then the lowest latency,
// then the highest priority, then the first. Scores are symmetric, so both
// ranks of the pair pick alike.
int best_offer(std::span<const Offer> offers, bool ordered, bool same_host);

}  // namespace hcomm::topology
