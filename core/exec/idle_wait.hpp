// How a rank waits while its operations make no progress. A blocking wake-up
// across cores costs tens of microseconds, so an idle rank spins first (on a
// mapped call's flags where it has them), then yields the core (other ranks
// may need it when they outnumber the cores), and only then sleeps in the
// links until they may move. When this host's ranks outnumber its cores, or
// a mapped peer this rank waits for last waited on its own CPU (the
// scheduler put them together, the other CPUs being busy), a spinning rank
// steals the core of the rank it waits for (which it woke, but which need
// not preempt it), so it yields at once and sleeps soon after (a wake-up on
// a shared core is cheap; a yield may leave the CPU to this rank until the
// next tick). On a shared CPU it also sleeps at once in the first of every
// few idle spells in a row: waking, it is placed on an idle CPU if there is
// one.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "core/exec/peer_io.hpp"

namespace hcomm::exec {

class IdleWait {
 public:
  using Clock = std::chrono::steady_clock;

  // `oversubscribed`: this host's ranks outnumber its cores.
  IdleWait(PeerIO& io, bool oversubscribed) : io_(io), oversubscribed_(oversubscribed) {}

  // A new wait: nothing idle yet.
  void start() {
    mapped_ = oversubscribed_ ? nullptr : io_.mapped();
    moved();
  }
  // The operations moved: the next idle round starts a new spell.
  void moved() {
    spell_started_ = false;
    flag_spins_ = 0;
  }
  // One round without progress: spins, yields or sleeps as the spell's age
  // says. Returns the time it read once the spell is under way and past its
  // spinning; std::nullopt while spinning, so a caller's deadlines, which
  // need the clock, are looked at only once waiting costs more than reading
  // it. The clock is never read while flags or the spin keep a call moving.
  std::optional<Clock::time_point> round();
  // When the current idle spell began (valid once round() returned a time).
  Clock::time_point idle_since() const { return spell_start_; }

 private:
  PeerIO& io_;
  const bool oversubscribed_;
  MappedIO* mapped_ = nullptr;  // spun on while idle; none when the ranks outnumber the cores
  bool spell_started_ = false;
  bool cpu_shared_ = false;  // a mapped peer last waited on this rank's CPU
  int flag_spins_ = 0;
  uint64_t shared_spells_ = 0;  // idle spells in a row that began with a mapped peer on this rank's CPU
  Clock::time_point spell_start_;
};

}  // namespace hcomm::exec
