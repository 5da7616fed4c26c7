// A monotonic clock of a few milliseconds' resolution that costs a fraction of
// CLOCK_MONOTONIC: progress reads it on every call while requests are pending.
#pragma once

#include <time.h>

#include <chrono>

namespace hcomm::shm {

struct CoarseClock {
  using duration = std::chrono::nanoseconds;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<CoarseClock>;
  static constexpr bool is_steady = true;

  static time_point now() noexcept {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return time_point(std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec));
  }
};

}  // namespace hcomm::shm
