// hcomm-perf --sweep-algos: at every size, the collective with each
// algorithm that serves it forced in turn, then with the library's own choice
// (auto); one table row per size, and at the end how close auto comes to the
// best forced algorithm (algo_summary.hpp).
#pragma once

#include <cstdint>

#include "collectives.hpp"
#include "communicator.hpp"
#include "options.hpp"

namespace hcomm::perf {

// Collective across all ranks; rank 0 prints. Returns the wrong elements,
// summed over every call and rank.
uint64_t sweep_algorithms(const Options& options, const Collective& collective, const Communicator& comm);

}  // namespace hcomm::perf
