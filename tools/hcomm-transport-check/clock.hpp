// Monotonic time and deadlines. steady_clock is CLOCK_MONOTONIC, one clock for
// every process of the machine, so a deadline can be handed to forked ranks.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace hcomm::tcheck {

using Clock = std::chrono::steady_clock;

inline double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

inline double seconds_since(Clock::time_point from) { return seconds_between(from, Clock::now()); }

inline int64_t to_ns(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

inline Clock::time_point from_ns(int64_t ns) { return Clock::time_point(std::chrono::nanoseconds(ns)); }

class Deadline {
 public:
  explicit Deadline(Clock::time_point at) : at_(at) {}
  static Deadline after(double seconds) {
    return Deadline(Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds)));
  }

  bool expired() const { return Clock::now() >= at_; }
  double remaining() const { return std::max(0.0, seconds_between(Clock::now(), at_)); }
  Clock::time_point at() const { return at_; }
  Deadline min(Deadline other) const { return Deadline(std::min(at_, other.at_)); }

 private:
  Clock::time_point at_;
};

}  // namespace hcomm::tcheck
