// exec::IdleWait: an idle rank spins, then yields, then sleeps in the links;
// with more ranks than cores it yields at once and sleeps soon after; a move
// starts the spell again.
#include <gtest/gtest.h>

#include <thread>

#include "core/exec/idle_wait.hpp"

namespace {

using hcomm::exec::IdleWait;
using namespace std::chrono_literals;

// Counts the sleeps IdleWait asks of the links.
class SleepCounter : public hcomm::exec::PeerIO {
 public:
  void* isend(int, const void*, size_t, uint64_t) override { return nullptr; }
  void* irecv(int, void*, size_t, uint64_t) override { return nullptr; }
  bool test(int, void*, size_t*) override { return false; }
  void progress() override {}
  void wait(int64_t timeout_us) override {
    ++sleeps;
    last_timeout_us = timeout_us;
  }
  void check_peers() override {}
  int sleeps = 0;
  int64_t last_timeout_us = 0;
};

// Rounds until one returns a time, or `limit` passes.
std::optional<IdleWait::Clock::time_point> round_until_time(IdleWait& idle, std::chrono::microseconds limit) {
  const auto end = IdleWait::Clock::now() + limit;
  while (IdleWait::Clock::now() < end)
    if (auto now = idle.round()) return now;
  return std::nullopt;
}

TEST(IdleWait, SpinsThenYieldsThenSleepsInTheLinks) {
  SleepCounter io;
  IdleWait idle(io, /*oversubscribed=*/false);
  idle.start();
  EXPECT_FALSE(idle.round()) << "the first idle round only notes when the spell began";
  const auto began = idle.idle_since();
  const auto yielded = round_until_time(idle, 1s);
  ASSERT_TRUE(yielded);
  EXPECT_GE(*yielded - began, 50us) << "it spins for 50 us before yielding";
  if (*yielded - began < 2ms) {
    EXPECT_EQ(io.sleeps, 0) << "yields do not sleep";
  }
  std::this_thread::sleep_for(3ms);
  ASSERT_TRUE(idle.round());
  EXPECT_EQ(io.sleeps, 1) << "after 2 ms of yields it sleeps in the links";
  EXPECT_EQ(io.last_timeout_us, 1000);
  EXPECT_EQ(idle.idle_since(), began);
}

TEST(IdleWait, AMoveStartsTheSpellAgain) {
  SleepCounter io;
  IdleWait idle(io, false);
  idle.start();
  idle.round();
  std::this_thread::sleep_for(3ms);
  ASSERT_TRUE(idle.round());
  EXPECT_EQ(io.sleeps, 1);
  const auto first_spell = idle.idle_since();
  idle.moved();
  EXPECT_FALSE(idle.round()) << "a new spell starts";
  EXPECT_GT(idle.idle_since(), first_spell);
  const auto yielded = round_until_time(idle, 1s);
  ASSERT_TRUE(yielded);
  EXPECT_GE(*yielded - idle.idle_since(), 50us) << "it spins again before yielding";
}

TEST(IdleWait, MoreRanksThanCoresYieldAtOnceAndSleepSoon) {
  SleepCounter io;
  IdleWait idle(io, /*oversubscribed=*/true);
  idle.start();
  EXPECT_FALSE(idle.round());
  ASSERT_TRUE(idle.round()) << "no spinning when ranks outnumber the cores";
  std::this_thread::sleep_for(100us);
  const int before = io.sleeps;
  ASSERT_TRUE(idle.round());
  EXPECT_EQ(io.sleeps, before + 1) << "it sleeps after 20 us of yields";
}

}  // namespace
