#include <gtest/gtest.h>

#include <array>

#include "core/topology/topology.hpp"
#include "tests/unit/topology_fixtures.hpp"

namespace hcomm::topology {
namespace {

using testing::made_up_rank;
using V = std::vector<int>;

// Hosts interleaved among the ranks: b a b c a.
TEST(TopologyLevels, HostsAreNumberedInOrderOfTheirLowestRank) {
  const Topology t({made_up_rank("b", 7, 0), made_up_rank("a", 7, 0), made_up_rank("b", 7, 1), made_up_rank("c", 7, 0),
                    made_up_rank("a", 7, 0)});
  EXPECT_EQ(t.nhosts(), 3);
  EXPECT_EQ(t.host_of(), (V{0, 1, 0, 2, 1}));
  EXPECT_EQ(t.host_ranks(0), (V{0, 2}));
  EXPECT_EQ(t.host_ranks(1), (V{1, 4}));
  EXPECT_EQ(t.host_ranks(2), (V{3}));
  EXPECT_EQ(t.leaders(), (V{0, 1, 3}));
}

// Each of boot id, hostname and network namespace alone tells hosts apart.
TEST(TopologyLevels, HostIdentityIsBootIdHostnameAndNetworkNamespace) {
  Description base = made_up_rank("node", 4026531840u, 0);
  Description other_ns = base, other_name = base, other_boot = base;
  other_ns.host.net_ns = 4026532000u;
  set_field(other_name.host.hostname, "node2");
  set_field(other_boot.host.boot_id, "another-boot");
  const Topology t({base, other_ns, other_name, other_boot, base});
  EXPECT_EQ(t.nhosts(), 4);
  EXPECT_EQ(t.host_of(), (V{0, 1, 2, 3, 0}));
  EXPECT_EQ(t.link_class(0, 4), LinkClass::kNuma);
  for (int r = 1; r < 4; ++r) EXPECT_EQ(t.link_class(0, r), LinkClass::kNetwork) << r;
}

TEST(TopologyLevels, LinkClassesFollowHostsAndNumaNodes) {
  // host a: NUMA 0, 0, 1, unbound; host b: NUMA 0.
  const Topology t({made_up_rank("a", 1, 0), made_up_rank("a", 1, 0), made_up_rank("a", 1, 1), made_up_rank("a", 1, -1),
                    made_up_rank("b", 1, 0)});
  const LinkClass S = LinkClass::kSelf, N = LinkClass::kNuma, H = LinkClass::kHost, X = LinkClass::kNetwork;
  const std::array<std::array<LinkClass, 5>, 5> expected = {
      {{S, N, H, H, X}, {N, S, H, H, X}, {H, H, S, H, X}, {H, H, H, S, X}, {X, X, X, X, S}}};
  for (int a = 0; a < 5; ++a)
    for (int b = 0; b < 5; ++b)
      EXPECT_EQ(t.link_class(a, b), expected[a][b]) << a << "-" << b << ": " << link_class_name(t.link_class(a, b));
  EXPECT_STREQ(link_class_name(N), "numa");
  for (LinkClass c : {S, N, H, X}) EXPECT_EQ(link_class_from_name(link_class_name(c)), c);
  EXPECT_FALSE(link_class_from_name("nvlink").has_value());
}

// Only ranks of one host known to run under different last-level caches are
// apart: unbound ones (-1) may share one.
TEST(TopologyLevels, CachesApartNeedBothCachesKnownOnOneHost) {
  std::vector<Description> ranks = {made_up_rank("a", 1, 0), made_up_rank("a", 1, 0), made_up_rank("a", 1, 1),
                                    made_up_rank("a", 1, -1), made_up_rank("b", 1, 1)};
  const Topology t(ranks);
  const std::array<std::array<bool, 5>, 5> expected = {{{false, false, true, false, false},
                                                        {false, false, true, false, false},
                                                        {true, true, false, false, false},
                                                        {false, false, false, false, false},
                                                        {false, false, false, false, false}}};
  for (int a = 0; a < 5; ++a)
    for (int b = 0; b < 5; ++b) EXPECT_EQ(t.caches_apart(a, b), expected[a][b]) << a << "-" << b;
  // One NUMA node with two last-level caches: apart by the caches alone.
  ranks[1].llc = 7;
  EXPECT_TRUE(Topology(ranks).caches_apart(0, 1));
}

// Two NICs per host, one per NUMA node: a rank's rail is the NIC on its NUMA
// node (the first NIC when it has none there or is unbound).
TEST(TopologyLevels, RailsFollowTheNicOnEachRanksNumaNode) {
  const std::vector<testing::NicSpec> two = {{"ib0", 0}, {"ib1", 1}};
  const Topology t({made_up_rank("a", 1, 0, two), made_up_rank("a", 1, 1, two), made_up_rank("b", 1, 1, two),
                    made_up_rank("b", 1, 0, two), made_up_rank("c", 1, -1, two), made_up_rank("c", 1, 1, two)});
  EXPECT_EQ(t.rail_of(0), 0);
  EXPECT_EQ(t.rail_of(1), 1);
  EXPECT_EQ(t.rail_of(4), 0);
  const std::vector<V> rails = t.rails();
  ASSERT_EQ(rails.size(), 2u);
  EXPECT_EQ(rails[0], (V{0, 3, 4}));
  EXPECT_EQ(rails[1], (V{1, 2, 5}));
}

TEST(TopologyLevels, OneNicPerHostMakesNoRails) {
  const Topology one({made_up_rank("a", 1, 0, {{"eth0", 0}}), made_up_rank("b", 1, 0, {{"eth0", 0}}),
                      made_up_rank("c", 1, 0, {{"eth0", 0}})});
  EXPECT_EQ(one.rail_of(2), 0);
  EXPECT_TRUE(one.rails().empty());
  const Topology none({made_up_rank("a", 1, 0), made_up_rank("b", 1, 0)});
  EXPECT_EQ(none.rail_of(0), -1);
  EXPECT_TRUE(none.rails().empty());
}

// A made-up score per transport for a pair: "shm" sees one host where the
// hostnames match (it ignores network namespaces, as a transport might),
// "tcp" reaches everything, slower.
std::vector<Offer> offers_for(const Description& a, const Description& b) {
  const bool same_name = std::string(a.host.hostname) == b.host.hostname;
  return {Offer{.score = {.reachable = same_name, .bandwidth_gbps = 10, .latency_us = 0.5},
                .priority = 1,
                .host_local = true},
          Offer{.score = {.reachable = 1, .bandwidth_gbps = 5, .latency_us = 6}, .priority = 0, .host_local = false}};
}

TEST(TopologyLevels, EveryPairChoosesAlikeFromBothSidesAndHostLocalStaysOnItsHost) {
  Description other_ns = made_up_rank("a", 2, 1);
  const Topology t({made_up_rank("a", 1, 0), made_up_rank("a", 1, 1), other_ns, made_up_rank("b", 1, 0),
                    made_up_rank("a", 1, 0), made_up_rank("c", 1, 0), made_up_rank("b", 1, 1)});
  for (bool ordered : {false, true})
    for (int a = 0; a < t.size(); ++a)
      for (int b = 0; b < t.size(); ++b) {
        if (a == b) continue;
        const int ab = best_offer(offers_for(t.rank(a), t.rank(b)), ordered, t.same_host(a, b));
        const int ba = best_offer(offers_for(t.rank(b), t.rank(a)), ordered, t.same_host(b, a));
        EXPECT_EQ(ab, ba) << a << "-" << b;
        // shm (0) on one host; tcp (1) between hosts, also between rank 2 and
        // the ranks of "a" that shm alone would call its own host.
        EXPECT_EQ(ab, t.same_host(a, b) ? 0 : 1) << a << "-" << b;
      }
}

TEST(TopologyLevels, BestOfferRanksBandwidthThenLatencyThenPriorityUnlessOrdered) {
  auto offer = [](int reachable, double bw, double lat, int prio) {
    return Offer{.score = {.reachable = reachable, .bandwidth_gbps = bw, .latency_us = lat},
                 .priority = prio,
                 .host_local = false};
  };
  EXPECT_EQ(best_offer(std::vector{offer(1, 5, 1, 0), offer(1, 9, 3, 0)}, false, true), 1);
  EXPECT_EQ(best_offer(std::vector{offer(1, 9, 3, 0), offer(1, 9, 2, 0)}, false, true), 1);
  EXPECT_EQ(best_offer(std::vector{offer(1, 9, 2, 5), offer(1, 9, 2, 7)}, false, true), 1);
  EXPECT_EQ(best_offer(std::vector{offer(1, 9, 2, 7), offer(1, 9, 2, 7)}, false, true), 0);
  EXPECT_EQ(best_offer(std::vector{offer(0, 90, 1, 9), offer(1, 1, 9, 0)}, false, true), 1);
  EXPECT_EQ(best_offer(std::vector{offer(0, 9, 1, 0), offer(1, 1, 9, 0), offer(1, 90, 1, 0)}, true, true), 1);
  EXPECT_EQ(best_offer(std::vector{offer(0, 9, 1, 0)}, false, true), -1);
  EXPECT_EQ(best_offer(std::vector<Offer>{}, true, true), -1);
}

TEST(TopologyLevels, DescribedLinksAreKeptPerUnorderedPair) {
  Topology t({made_up_rank("a", 1, 0), made_up_rank("a", 1, 0), made_up_rank("b", 1, 0)});
  EXPECT_FALSE(t.described_link(0, 2).has_value());
  t.describe_link(2, 0, {.reachable = 1, .bandwidth_gbps = 1.25, .latency_us = 40});
  ASSERT_TRUE(t.described_link(0, 2).has_value());
  EXPECT_EQ(t.described_link(0, 2)->bandwidth_gbps, 1.25);
  EXPECT_EQ(t.described_link(2, 0)->latency_us, 40);
  EXPECT_FALSE(t.described_link(0, 1).has_value());
}

}  // namespace
}  // namespace hcomm::topology
