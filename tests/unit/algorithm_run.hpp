// One case end to end: every rank builds, the schedules are checked, run by
// the simulator on real data and the result compared with the serial
// reference; a barrier is run once per late rank instead, checking that no
// other rank leaves before the late one has entered.
#pragma once

#include <string>
#include <vector>

#include "algorithm_case.hpp"

namespace hcomm::algotest {

struct Verdict {
  enum Kind { kPassed, kDeclined, kOutOfRange, kFailed } kind;
  std::vector<std::string> problems;
};

// The schedules of one shape already run under another view: an identical
// build is checked under its own view but not run again.
using SeenSchedules = std::vector<std::vector<RankSchedule>>;

Verdict run_case(const hcomm_algorithm_desc_t& algo, const Case& c, SeenSchedules& seen);

// The lines of `problems`, indented, at most 20.
std::string joined(const std::vector<std::string>& problems);

}  // namespace hcomm::algotest
