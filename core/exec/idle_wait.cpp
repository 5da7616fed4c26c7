#include "core/exec/idle_wait.hpp"

#include <sched.h>

#include "core/exec/mapped_io.hpp"

namespace hcomm::exec {

namespace {

constexpr auto kSpinFor = std::chrono::microseconds(50);
constexpr auto kYieldFor = std::chrono::microseconds(2000);
constexpr auto kSharedYieldFor = std::chrono::microseconds(20);
constexpr int64_t kSleepUs = 1000;
// A shared CPU's rank sleeps at once in the first of this many idle spells.
constexpr uint64_t kSharedProbeEvery = 256;
// While spinning, a mapped call's flag is looked at this many times between
// rounds of the progress loop; the bound keeps the deadlines in force should
// a raised flag not make a step complete.
constexpr int kFlagLooks = 64;
constexpr int kMaxFlagSpins = 1000;

}  // namespace

std::optional<IdleWait::Clock::time_point> IdleWait::round() {
  if (mapped_ && flag_spins_ < kMaxFlagSpins && mapped_->spin(kFlagLooks)) {
    ++flag_spins_;
    return std::nullopt;
  }
  Clock::time_point now = Clock::now();
  if (!spell_started_) {
    spell_started_ = true;
    spell_start_ = now;
    cpu_shared_ = mapped_ && mapped_->shares_cpu();
    shared_spells_ = cpu_shared_ ? shared_spells_ + 1 : 0;
    return std::nullopt;
  }
  const Clock::duration idle = now - spell_start_;
  const bool shared = oversubscribed_ || cpu_shared_;
  if (idle < (shared ? Clock::duration::zero() : Clock::duration(kSpinFor))) return std::nullopt;
  const bool probe = cpu_shared_ && (shared_spells_ - 1) % kSharedProbeEvery == 0;
  if (!probe && idle < (shared ? Clock::duration(kSharedYieldFor) : Clock::duration(kYieldFor))) {
    sched_yield();
  } else {
    io_.wait(kSleepUs);
    now = Clock::now();
  }
  return now;
}

}  // namespace hcomm::exec
