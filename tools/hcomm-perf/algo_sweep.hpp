// hcomm-perf --sweep-algos: at every size, the collective with each
// algorithm that serves it forced in turn, then with the library's own choice
// (auto); one table row per size, and at the end how close auto comes to the
// best forced algorithm (algo_summary.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "algo_summary.hpp"
#include "collectives.hpp"
#include "communicator.hpp"
#include "options.hpp"

namespace hcomm::perf {

struct AlgoSweep {
  std::vector<std::string> names;  // the algorithms forced, in the table's order
  std::vector<SweepPoint> points;
  std::vector<AlgoTimes> times;  // one per point
  uint64_t wrong = 0;            // summed over every call and rank
};

// Collective across all ranks: the sweep's measurements; rank 0 prints its
// table (without the closing figures).
AlgoSweep measure_algorithms(const Options& options, const Collective& collective, const Communicator& comm);

// Collective across all ranks; rank 0 prints. Returns the wrong elements,
// summed over every call and rank.
uint64_t sweep_algorithms(const Options& options, const Collective& collective, const Communicator& comm);

}  // namespace hcomm::perf
