// MPI's matching order (core/p2p/match_queues.hpp): receives take the oldest
// arrival they match, arrivals the oldest receive that matches them, with
// wildcards on either field; probes look without taking; cancelled receives
// leave the queue.
#include "core/p2p/match_queues.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <vector>

namespace {

using hcomm::p2p::kAny;

struct Receive {
  int source, tag;
};
struct Arrival {
  int source, tag;
  int id;  // its place in arrival order
};
using Queues = hcomm::p2p::MatchQueues<Receive, Arrival>;

TEST(MatchQueues, AReceiveTakesTheOldestArrivalItMatches) {
  Queues q;
  std::deque<Arrival> arrivals = {{0, 5, 0}, {1, 5, 1}, {0, 6, 2}, {0, 5, 3}, {1, 6, 4}};
  for (Arrival& a : arrivals) EXPECT_EQ(q.arrive(&a), nullptr);
  Receive from1_any{1, kAny}, any_6{kAny, 6}, from0_5{0, 5}, any_any{kAny, kAny};
  EXPECT_EQ(q.post(&from1_any)->id, 1);
  EXPECT_EQ(q.post(&any_6)->id, 2);
  EXPECT_EQ(q.post(&from0_5)->id, 0);
  EXPECT_EQ(q.post(&any_any)->id, 3);
  EXPECT_EQ(q.post(&any_any)->id, 4);
  EXPECT_EQ(q.post(&any_any), nullptr) << "no arrival is left, so the receive waits";
  EXPECT_EQ(q.waiting().size(), 1u);
  EXPECT_TRUE(q.arrived().empty());
}

TEST(MatchQueues, AnArrivalGoesToTheOldestReceiveThatMatchesIt) {
  Queues q;
  Receive from0_7{0, 7}, any_any{kAny, kAny}, from1_any{1, kAny}, any_7{kAny, 7};
  for (Receive* r : {&from0_7, &any_any, &from1_any, &any_7}) EXPECT_EQ(q.post(r), nullptr);
  Arrival a{1, 7, 0}, b{0, 7, 1}, c{1, 9, 2}, d{2, 7, 3}, e{2, 8, 4};
  EXPECT_EQ(q.arrive(&a), &any_any);  // from0_7 is older but names rank 0
  EXPECT_EQ(q.arrive(&b), &from0_7);
  EXPECT_EQ(q.arrive(&c), &from1_any);
  EXPECT_EQ(q.arrive(&d), &any_7);
  EXPECT_EQ(q.arrive(&e), nullptr) << "no receive is left, so it waits";
  ASSERT_EQ(q.arrived().size(), 1u);
  EXPECT_EQ(q.arrived().front(), &e);
}

// Each sender's messages are taken in the order they arrived (the order
// sent), whatever their tags and whichever receives take them, posted
// before or after them.
TEST(MatchQueues, NoArrivalOvertakesAnotherOfItsSender) {
  Queues q;
  std::deque<Arrival> arrivals;
  std::deque<Receive> receives;
  std::vector<int> last(3, -1);
  int taken = 0;
  auto took = [&](const Arrival* a) {
    if (!a) return;
    ++taken;
    EXPECT_GT(a->id, last[a->source]) << "arrival " << a->id << " overtook " << last[a->source];
    last[a->source] = a->id;
  };
  for (int i = 0; i < 30; ++i) {
    // Receives of one rank or of any, any tag, ahead of the arrivals or behind them.
    receives.push_back({i % 2 ? kAny : (i / 2) % 3, kAny});
    if (i % 5 < 2) took(q.post(&receives.back()));
    arrivals.push_back({i % 3, (i * 7) % 4, i});
    const Receive* r = q.arrive(&arrivals.back());
    if (r) took(&arrivals.back());
    if (i % 5 >= 2) took(q.post(&receives.back()));
  }
  EXPECT_EQ(taken + static_cast<int>(q.arrived().size()), 30);
  EXPECT_EQ(taken + static_cast<int>(q.waiting().size()), 30);
}

TEST(MatchQueues, FindLooksWithoutTakingAndRemoveTakesOut) {
  Queues q;
  Arrival a{3, 1, 0}, b{3, 2, 1}, c{4, 2, 2};
  for (Arrival* x : {&a, &b, &c}) q.arrive(x);
  EXPECT_EQ(q.find(kAny, 2), &b);
  EXPECT_EQ(q.find(4, kAny), &c);
  EXPECT_EQ(q.find(5, kAny), nullptr);
  EXPECT_EQ(q.find(kAny, kAny), &a);
  EXPECT_EQ(q.arrived().size(), 3u);
  q.remove(&b);  // a matched probe took it
  EXPECT_EQ(q.find(kAny, 2), &c);
  Receive any2{kAny, 2};
  EXPECT_EQ(q.post(&any2), &c);
}

TEST(MatchQueues, AWithdrawnReceiveTakesNothing) {
  Queues q;
  Receive first{0, 1}, second{0, 1};
  q.post(&first);
  q.post(&second);
  EXPECT_TRUE(q.withdraw(&first));
  EXPECT_FALSE(q.withdraw(&first)) << "it is gone already";
  Arrival a{0, 1, 0};
  EXPECT_EQ(q.arrive(&a), &second);
  EXPECT_FALSE(q.withdraw(&second)) << "a matched receive cannot be withdrawn";
}

}  // namespace
