// The verbs transport's per-peer protocol without a device: credit flow
// control (with the reserve for credit returns and no credit ping-pong),
// tag matching in arrival order, and link scores from two addresses.
#if HCOMM_HAVE_VERBS
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "hcomm/plugin/util.hpp"
#include "plugins/transport/verbs/protocol.hpp"
#include "plugins/transport/verbs/score.hpp"

namespace hcomm::verbs {
namespace {

TEST(VerbsCredits, LastCreditIsKeptForReturns) {
  Credits c(5, 5);
  int sent = 0;
  while (c.can_send_data()) c.spend(), ++sent;
  EXPECT_EQ(sent, 4);
  EXPECT_TRUE(c.can_send_credit());
  c.spend();
  EXPECT_FALSE(c.can_send_credit());
  c.add(3);
  EXPECT_EQ(c.available(), 3);
  EXPECT_TRUE(c.can_send_data());
}

TEST(VerbsCredits, ReturnsAfterAQuarterOfDataOrHalfOfAnything) {
  Credits c(32, 32);
  for (int i = 0; i < 7; ++i) c.reposted(false);
  EXPECT_FALSE(c.should_return());
  c.reposted(false);
  EXPECT_TRUE(c.should_return());
  EXPECT_EQ(c.take_owed(), 8);
  EXPECT_FALSE(c.should_return());
  for (int i = 0; i < 15; ++i) c.reposted(true);
  EXPECT_FALSE(c.should_return());  // a credit return is not answered at once
  c.reposted(true);
  EXPECT_TRUE(c.should_return());
  EXPECT_EQ(c.take_owed(), 16);
}

// Two peers exchanging only credit returns settle: a few messages, not a loop.
TEST(VerbsCredits, IdlePeersDoNotPingPong) {
  for (int buffers : {4, 5, 7, 32}) {
    Credits a(buffers, buffers), b(buffers, buffers);
    // a's data used every buffer of b but the reserve.
    int used = 0;
    while (a.can_send_data()) a.spend(), b.reposted(false), ++used;
    int messages = 0;
    bool moved = true;
    while (moved && messages < 100) {
      moved = false;
      if (b.should_return() && b.can_send_credit()) {
        int n = b.take_owed();
        b.spend();
        a.add(n);
        a.reposted(true);
        moved = true, ++messages;
      }
      if (a.should_return() && a.can_send_credit()) {
        int n = a.take_owed();
        a.spend();
        b.add(n);
        b.reposted(true);
        moved = true, ++messages;
      }
    }
    EXPECT_LT(messages, 4) << buffers << " buffers";
    EXPECT_TRUE(a.can_send_data()) << buffers << " buffers";
  }
}

Request* recv(RequestSet& set, uint64_t tag, size_t len = 64) {
  return set.create(Request::Kind::kRecv, nullptr, len, tag);
}

Arrival eager(uint64_t len, std::byte fill) {
  return Arrival{.rendezvous = false, .seq = 0, .len = len, .payload = std::vector<std::byte>(len, fill)};
}

TEST(VerbsMatcher, SameTagMatchesInOrderOtherTagsIndependently) {
  RequestSet set;
  Matcher m;
  Request* r1 = recv(set, 7);
  Request* r2 = recv(set, 7);
  Request* r3 = recv(set, 9);
  m.post_receive(r1);
  m.post_receive(r2);
  m.post_receive(r3);
  EXPECT_EQ(m.match_arrival(9), r3);
  EXPECT_EQ(m.match_arrival(7), r1);
  EXPECT_EQ(m.match_arrival(7), r2);
  EXPECT_EQ(m.match_arrival(7), nullptr);
  EXPECT_EQ(m.match_arrival(~0ull), nullptr);
}

TEST(VerbsMatcher, ArrivalsWaitInOrderPerTag) {
  Matcher m;
  m.keep_arrival(0, eager(1, std::byte{1}));
  m.keep_arrival(~0ull, Arrival{.rendezvous = true, .seq = 41, .len = 1 << 20, .payload = {}});
  m.keep_arrival(0, eager(3, std::byte{2}));
  EXPECT_EQ(m.arrivals(), 3u);
  std::optional<Arrival> a = m.match_receive(0);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->len, 1u);
  EXPECT_EQ(a->payload[0], std::byte{1});
  std::optional<Arrival> big = m.match_receive(~0ull);
  ASSERT_TRUE(big);
  EXPECT_TRUE(big->rendezvous);
  EXPECT_EQ(big->seq, 41u);
  std::optional<Arrival> b = m.match_receive(0);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->len, 3u);
  EXPECT_EQ(b->payload[2], std::byte{2});
  EXPECT_FALSE(m.match_receive(0));
  EXPECT_EQ(m.arrivals(), 0u);
}

TEST(VerbsMatcher, TakePostedReturnsEveryWaitingReceive) {
  RequestSet set;
  Matcher m;
  std::vector<Request*> posted;
  for (uint64_t tag : {1, 2, 2, 5, 1}) posted.push_back(recv(set, tag)), m.post_receive(posted.back());
  EXPECT_EQ(m.match_arrival(5), posted[3]);
  std::vector<Request*> left = m.take_posted();
  EXPECT_EQ(left.size(), 4u);
  for (Request* r : {posted[0], posted[1], posted[2], posted[4]})
    EXPECT_NE(std::find(left.begin(), left.end(), r), left.end());
  EXPECT_EQ(m.match_arrival(1), nullptr);
}

TEST(VerbsRequest, FirstOutcomeCountsAndTestFrees) {
  RequestSet set;
  Request* ok = set.create(Request::Kind::kSend, nullptr, 10, 1);
  size_t bytes = 99;
  EXPECT_FALSE(set.test(ok, &bytes));
  ok->complete(10);
  ok->fail(HCOMM_ERR_REMOTE, "late");
  EXPECT_TRUE(set.test(ok, &bytes));
  EXPECT_EQ(bytes, 10u);
  EXPECT_FALSE(set.owns(ok));
  Request* bad = set.create(Request::Kind::kRecv, nullptr, 10, 1);
  bad->fail(HCOMM_ERR_REMOTE, "rank 3 died");
  bad->complete(10);
  try {
    set.test(bad, &bytes);
    ADD_FAILURE() << "no error";
  } catch (const plugin::Error& e) {
    EXPECT_EQ(e.code(), HCOMM_ERR_REMOTE);
    EXPECT_STREQ(e.what(), "rank 3 died");
  }
  EXPECT_FALSE(set.owns(bad));
}

Address port(LinkLayer layer, uint32_t rate, uint8_t prefix) {
  Address a;
  a.has_device = true;
  a.link_layer = layer;
  a.rate_mbps = rate;
  a.gid[0] = prefix;
  a.listen_port = 1;
  return a;
}

TEST(VerbsScore, SymmetricAndUnreachableWithoutAPath) {
  Address ib100 = port(LinkLayer::kInfiniBand, 100000, 0xfe);
  Address ib200 = port(LinkLayer::kInfiniBand, 200000, 0xfe);
  hcomm_link_score_t s = score_link(ib100, ib200);
  EXPECT_EQ(s.reachable, 1);
  EXPECT_DOUBLE_EQ(s.bandwidth_gbps, 12.5);  // the slower port
  EXPECT_DOUBLE_EQ(s.latency_us, kLatencyUs);
  hcomm_link_score_t r = score_link(ib200, ib100);
  EXPECT_EQ(r.reachable, s.reachable);
  EXPECT_EQ(r.bandwidth_gbps, s.bandwidth_gbps);
  EXPECT_EQ(score_link(ib100, port(LinkLayer::kInfiniBand, 100000, 0x01)).reachable, 0);  // another subnet
  EXPECT_EQ(score_link(ib100, port(LinkLayer::kEthernet, 100000, 0xfe)).reachable, 0);
  EXPECT_EQ(score_link(port(LinkLayer::kEthernet, 25000, 0), port(LinkLayer::kEthernet, 25000, 9)).reachable, 1);
  Address none;
  EXPECT_EQ(score_link(none, ib100).reachable, 0);
  EXPECT_EQ(score_link(ib100, none).reachable, 0);
  EXPECT_EQ(score_link(none, none).reachable, 0);
  EXPECT_DOUBLE_EQ(score_link(none, none).bandwidth_gbps, 0.0);
}

}  // namespace
}  // namespace hcomm::verbs
#endif
